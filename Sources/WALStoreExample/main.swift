/// walstore-example: a short tour of the `Engine` API, then the figures the README quotes.
///
///     walstore-example [--quick] [--demo-only] [--dir PATH]
///
/// 1. The demo (always): open, commit, close, reopen, read, scan.
/// 2. The figures (unless `--demo-only`): each measured beside a plain `write`/`fdatasync` loop
///    doing the same I/O, the "physical limit", then a summary table. `--quick` shrinks every
///    workload so the run takes seconds (for CI).
///
/// Exit status: 0 on success, 1 on an error (printed), 2 on a bad command line.
import Engine
import Glibc

let arguments: Arguments
switch Arguments.parse(CommandLine.arguments.dropFirst()) {
case .run(let parsed):
    arguments = parsed
case .help:
    print(Arguments.usage)
    exit(0)
case .invalid(let problem):
    printError("walstore-example: \(problem)\n\(Arguments.usage)")
    exit(2)
}

do {
    try runDemo(under: arguments.directory)
    if !arguments.demoOnly {
        try runFigures(arguments.quick ? .quick : .full, under: arguments.directory)
    }
} catch let error as EngineError {
    printError("walstore-example: \(error)")
    exit(1)
} catch {
    printError("walstore-example: \(error)")
    exit(1)
}
