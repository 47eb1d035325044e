/// One key–value pair of the data set.
public struct Record: Sendable {
    /// 16 random bytes (a UUID's worth).
    public let key: [UInt8]
    /// A JSON-like document of 260–340 bytes.
    public let value: [UInt8]

    public init(key: [UInt8], value: [UInt8]) {
        self.key = key
        self.value = value
    }

    /// Key plus value bytes: what the MB/s column counts.
    public var rawBytes: Int { key.count + value.count }
}
