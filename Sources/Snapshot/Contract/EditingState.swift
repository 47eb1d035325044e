import Foundation

/// Who is making a change: passed with each save and fetch, as SwiftData's `EditingState`.
public struct EditingState: Hashable, Codable, Sendable {
    /// Identifies the editing context (one model context, say).
    public var id: UUID
    /// The author recorded with the change (in history), when there is one.
    public var author: String?

    /// An editing state; a fresh `id` unless one is given.
    public init(id: UUID = UUID.makeRandom(), author: String? = nil) {
        self.id = id
        self.author = author
    }
}
