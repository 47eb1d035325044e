#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation

/// A directory this process may not make a store in, found by a real condition: a directory of
/// mode 000 for an ordinary user; as root, whom permission bits do not refuse, a directory of
/// sysfs, where the kernel refuses every `mkdir` (`EPERM`). `nil` where neither exists (root
/// on a system without sysfs).
package enum DeniedDirectory {
    /// A store path whose directory cannot be made (its parent exists), or `nil`.
    package static func storePath(in temporary: TemporaryDirectory) -> String? {
        if getuid() != 0 {
            let parent = temporary.path + "/no-access"
            guard mkdir(parent, 0o000) == 0 else { return nil }
            return parent + "/store"
        }
        return isSysfsAvailable ? "/sys/walstore-\(UUID().uuidString)" : nil
    }

    /// Whether the test can find such a directory here.
    package static var isAvailable: Bool { getuid() != 0 || isSysfsAvailable }

    private static var isSysfsAvailable: Bool {
        var status = stat()
        return stat("/sys/kernel", &status) == 0
    }
}
