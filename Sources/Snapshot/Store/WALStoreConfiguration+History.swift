import Foundation

extension WALStoreConfiguration {
    /// Whether a ``WALDataStore`` records the history of its saves, and how much of it it keeps.
    ///
    /// History is **off by default** (as Core Data's persistent history tracking): a store that
    /// nobody reads the history of would otherwise grow without bound. When it is on, every save
    /// that changes something is recorded as one transaction in the same engine commit as the
    /// save (``WALDataStore/fetchHistory(_:)``).
    public struct History: Hashable, Sendable {
        /// Whether saves are recorded. Opening a store with history off ends the history it had:
        /// saves made meanwhile are not recorded, so every earlier token expires and the recorded
        /// transactions are deleted.
        public var isEnabled: Bool
        /// Transactions older than this many seconds are deleted (`nil`: kept whatever their age).
        public var maximumAge: TimeInterval?
        /// At most this many of the newest transactions are kept (`nil`: no limit).
        public var maximumCount: Int?

        /// History off.
        public static let disabled = History(isEnabled: false)

        /// History on, keeping transactions until ``WALDataStore/deleteHistory(_:)`` deletes them
        /// or they pass `maximumAge` (seconds) or fall out of the newest `maximumCount`.
        public static func enabled(maximumAge: TimeInterval? = nil, maximumCount: Int? = nil) -> History {
            History(isEnabled: true, maximumAge: maximumAge, maximumCount: maximumCount)
        }

        /// A history setting.
        public init(isEnabled: Bool, maximumAge: TimeInterval? = nil, maximumCount: Int? = nil) {
            self.isEnabled = isEnabled
            self.maximumAge = maximumAge
            self.maximumCount = maximumCount
        }

        func validate() throws {
            if let maximumAge, !(maximumAge > 0) || !maximumAge.isFinite {
                throw DataStoreError(.invalidRequest, "The history's maximumAge is \(maximumAge) seconds; give a positive, finite age or nil.")
            }
            if let maximumCount, maximumCount < 1 {
                throw DataStoreError(.invalidRequest, "The history's maximumCount is \(maximumCount); keep at least 1 transaction, or pass nil.")
            }
        }
    }
}
