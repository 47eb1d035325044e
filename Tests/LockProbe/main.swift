// A child process for the lock tests: opens the store at the given directory and reports by exit
// code — 0 opened (and closed), 3 the store is locked, 1 any other error, 2 bad usage.
import Engine

#if canImport(Glibc)
    import Glibc
#endif

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    print("usage: walstore-lock-probe STORE-DIRECTORY")
    exit(2)
}
do {
    let store = try LogStore.open(at: arguments[1])
    try store.close()
    print("opened")
    exit(0)
} catch {
    print(error)
    exit(error.code == .locked ? 3 : 1)
}
