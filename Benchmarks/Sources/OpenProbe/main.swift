// walstore-open-probe: opens an existing engine store several times and prints how long each
// open took and what recovery did, cold (its files dropped from the page cache first) or warm.
// The store is closed after each open, which changes nothing once a first open has collected
// what it collects (unreferenced blobs, leftovers).
//
//     walstore-open-probe PATH [--cold] [--repeat N]
import BenchSupport
import Engine
import Foundation

var arguments = CommandLine.arguments.dropFirst()
var path: String?
var cold = false
var repeats = 5
while let argument = arguments.popFirst() {
    switch argument {
    case "--cold": cold = true
    case "--repeat": repeats = Int(arguments.popFirst() ?? "") ?? repeats
    default: path = argument
    }
}
guard let path else {
    FileHandle.standardError.write(Data("usage: walstore-open-probe PATH [--cold] [--repeat N]\n".utf8))
    exit(2)
}
var options = LogStore.Options()
options.compaction = .manual
/// CPU time of the whole process so far (every thread), in milliseconds.
func cpuMilliseconds() -> Double {
    var usage = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    let user = Double(usage.ru_utime.tv_sec) * 1000 + Double(usage.ru_utime.tv_usec) / 1000
    return user + Double(usage.ru_stime.tv_sec) * 1000 + Double(usage.ru_stime.tv_usec) / 1000
}

var times: [Double] = []
var cpuTimes: [Double] = []
for _ in 0..<repeats {
    if cold { try StoreFiles.dropPageCache(path) }
    let cpuBefore = cpuMilliseconds()
    let (store, seconds) = try Stopwatch.time { try LogStore.open(at: path, options: options) }
    let cpu = cpuMilliseconds() - cpuBefore
    cpuTimes.append(cpu)
    let statistics = store.statistics
    try store.close()
    let r = statistics.recovery
    times.append(seconds * 1000)
    print(String(
        format: "open %.1f ms (CPU %.1f ms): %d keys, %d segments, %d tables; hints loaded %d, segments replayed %d, replayed %llu B, removed blobs %d, upgraded from format 3 %d",
        seconds * 1000, cpu, statistics.keyCount, statistics.segments.count, statistics.tables.count, r.segmentHintsLoaded,
        r.segmentsReplayed, r.replayedBytes, r.removedBlobs, r.upgradedFromFormat3 ? 1 : 0))
}
let sorted = times.sorted()
let cpuSorted = cpuTimes.sorted()
print(String(
    format: "%@ open: median %.1f ms, min %.1f ms; CPU median %.1f ms (%d runs)", cold ? "cold" : "warm", sorted[sorted.count / 2],
    sorted[0], cpuSorted[cpuSorted.count / 2], sorted.count))
