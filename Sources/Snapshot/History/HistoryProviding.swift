/// A store that keeps the history of its saves, as SwiftData's `HistoryProviding`.
public protocol HistoryProviding: AnyObject, Sendable {
    /// The transactions it records.
    associatedtype HistoryType: HistoryTransaction

    /// ``HistoryType``.
    static var historyType: HistoryType.Type { get }

    /// The transactions `descriptor` selects, in its order.
    func fetchHistory(_ descriptor: HistoryDescriptor<HistoryType>) throws -> [HistoryType]
    /// Deletes the transactions `descriptor` selects.
    func deleteHistory(_ descriptor: HistoryDescriptor<HistoryType>) throws
}
