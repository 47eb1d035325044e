/// Why a `#Predicate` or `SortDescriptor` could not be turned into a query the store runs.
///
/// The model layer never falls back to filtering or sorting in memory: a predicate it cannot
/// translate is refused with this error, which names the expression (``expression``) and says
/// how to write the condition instead.
public struct PredicateTranslationError: Error, Sendable, CustomStringConvertible {
    /// What kind of refusal this is. New codes may be added; switch with a `default` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case unsupportedExpression, undeclaredKeyPath, unsupportedValue
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// An expression the store's predicates cannot express (arithmetic, a ternary, a
        /// comparison of two properties, …), or one in a place it cannot be used.
        public static let unsupportedExpression = Code(.unsupportedExpression)
        /// A key path the model's ``PersistentModel/properties`` does not declare, or one
        /// through a value rather than a relationship (`$0.title.count`).
        public static let undeclaredKeyPath = Code(.undeclaredKeyPath)
        /// A constant that is not a store value (not an ``AttributeValue``, model or
        /// identifier).
        public static let unsupportedValue = Code(.unsupportedValue)

        /// The code's name (`"unsupportedExpression"`, …).
        public var description: String {
            switch value {
            case .unsupportedExpression: "unsupportedExpression"
            case .undeclaredKeyPath: "undeclaredKeyPath"
            case .unsupportedValue: "unsupportedValue"
            }
        }
    }

    /// What kind of refusal this is.
    public var code: Code
    /// What was refused and what to write instead.
    public var message: String
    /// The refused expression: its type, as `PredicateExpressions.Arithmetic<…>`, or the key
    /// path.
    public var expression: String

    /// An error with the given code, message and refused expression.
    public init(_ code: Code, _ message: String, expression: String) {
        self.code = code
        self.message = message
        self.expression = expression
    }

    /// `PredicateTranslationError.<code>: <message> [expression <expression>]`.
    public var description: String {
        "PredicateTranslationError.\(code): \(message) [expression \(expression)]"
    }
}
