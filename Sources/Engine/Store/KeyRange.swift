extension LogStore {
    /// A range of keys in byte order, for ``LogStore/scan(_:limit:reverse:)``: each end is open
    /// (unbounded), inclusive or exclusive.
    public struct KeyRange: Sendable, Hashable {
        /// One end of a range.
        public enum Bound: Sendable, Hashable {
            /// No limit at this end.
            case unbounded
            /// Keys up to (or from) this one, itself included.
            case inclusive([UInt8])
            /// Keys up to (or from) this one, itself excluded.
            case exclusive([UInt8])
        }

        /// The low end.
        public var lower: Bound
        /// The high end.
        public var upper: Bound

        /// The keys between `lower` and `upper`; both unbounded by default (every key).
        public init(lower: Bound = .unbounded, upper: Bound = .unbounded) {
            self.lower = lower
            self.upper = upper
        }

        /// Every key.
        public static let all = KeyRange()

        /// The keys that start with `prefix` (every key for an empty prefix).
        public static func prefix(_ prefix: [UInt8]) -> KeyRange {
            guard !prefix.isEmpty else { return .all }
            // The first key after every key under the prefix: drop trailing 0xFF bytes, then add
            // one to the last byte. A prefix of 0xFF bytes only has no such key.
            var end = prefix
            while end.last == 0xFF { end.removeLast() }
            guard !end.isEmpty else { return KeyRange(lower: .inclusive(prefix)) }
            end[end.count - 1] += 1
            return KeyRange(lower: .inclusive(prefix), upper: .exclusive(end))
        }

        /// True when `key` lies in the range.
        public func contains(_ key: [UInt8]) -> Bool { isAboveLower(key) && isBelowUpper(key) }

        /// True when `key` (in place) is not below the low end.
        func isAboveLower(_ key: UnsafeRawBufferPointer) -> Bool {
            switch lower {
            case .unbounded: true
            case .inclusive(let bound): bound.withUnsafeBytes { compareBytes(key, $0) >= 0 }
            case .exclusive(let bound): bound.withUnsafeBytes { compareBytes(key, $0) > 0 }
            }
        }

        /// True when `key` (in place) is not above the high end.
        func isBelowUpper(_ key: UnsafeRawBufferPointer) -> Bool {
            switch upper {
            case .unbounded: true
            case .inclusive(let bound): bound.withUnsafeBytes { compareBytes(key, $0) <= 0 }
            case .exclusive(let bound): bound.withUnsafeBytes { compareBytes(key, $0) < 0 }
            }
        }

        /// True when `key` is not below the low end.
        func isAboveLower(_ key: [UInt8]) -> Bool {
            switch lower {
            case .unbounded: true
            case .inclusive(let bound): compareBytes(key, bound) >= 0
            case .exclusive(let bound): compareBytes(key, bound) > 0
            }
        }

        /// True when `key` is not above the high end.
        func isBelowUpper(_ key: [UInt8]) -> Bool {
            switch upper {
            case .unbounded: true
            case .inclusive(let bound): compareBytes(key, bound) <= 0
            case .exclusive(let bound): compareBytes(key, bound) < 0
            }
        }
    }
}
