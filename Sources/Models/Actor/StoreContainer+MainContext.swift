extension StoreContainer {
    /// The container's context for the main actor, as SwiftData's `ModelContainer.mainContext`:
    /// made at the first use, then the same one each time. The UI's code uses it synchronously
    /// on the main actor; its work never waits behind a ``ModelActor``'s or ``StoreActor``'s
    /// (each runs on its own serial queue).
    @MainActor public var mainContext: ModelContext {
        if let context = mainContextStorage.context { return context }
        let context = ModelContext(self)
        mainContextStorage.context = context
        return context
    }
}

/// Where a container keeps its ``StoreContainer/mainContext``: a property isolated to the main
/// actor, so only code on the main actor reads or writes it.
final class MainContextStorage: Sendable {
    @MainActor var context: ModelContext?

    init() {}
}
