/// A key path through an object's properties by name: `title`, or through to-one
/// relationships, `attachment.post.title`.
///
/// Written and encoded as its components joined by `.`. A path with an empty component
/// (`""`, `"post..title"`) can be made, and is refused as ``DataStoreError/Code/invalidPredicate``
/// by the evaluator and stores.
public struct PropertyPath: Hashable, Codable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The property names, from the object outwards.
    public var components: [String]

    /// The path `dotted` splits into at each `.`.
    public init(_ dotted: String) {
        components = dotted.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    /// The path of `components`.
    public init(components: [String]) { self.components = components }

    /// The path `value` splits into at each `.`.
    public init(stringLiteral value: String) { self.init(value) }

    /// The components joined by `.`.
    public var description: String { components.joined(separator: ".") }

    /// Decodes a path from its dotted string.
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes the dotted string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
