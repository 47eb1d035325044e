/// SplitMix64 (Steele, Lea & Flood, 2014): a tiny seedable generator, so that every run writes
/// exactly the same keys and values.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One key–value pair of the figures' workload.
struct Record {
    /// 16 random bytes, like a binary UUID.
    var key: [UInt8]
    /// About 300 bytes of JSON-like text.
    var value: [UInt8]

    /// Key plus value: the "raw" bytes the figures count.
    var rawBytes: Int { key.count + value.count }
}

/// Makes deterministic records that look like an app's user rows:
///
///     {"id":"<uuid>","name":"user 123","email":"user123@example.com","score":4711,
///      "tags":["swift","ios"],"created":"2024-03-17T08:41:05Z","bio":"calm river ..."}
///
/// The length varies between about 260 and 340 bytes; the random id, numbers and word choice keep
/// the text only moderately compressible (2–3x with zlib), like real records.
struct RecordGenerator {
    private var random: SplitMix64
    private var serial = 0

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    /// The next record.
    mutating func next() -> Record {
        serial += 1
        var key = [UInt8](repeating: 0, count: 16)
        for half in 0..<2 {
            let word = random.next()
            for byte in 0..<8 { key[half * 8 + byte] = UInt8(truncatingIfNeeded: word >> (byte * 8)) }
        }
        return Record(key: key, value: value(id: key))
    }

    /// The next `count` records.
    mutating func next(_ count: Int) -> [Record] {
        (0..<count).map { _ in next() }
    }

    private mutating func value(id: [UInt8]) -> [UInt8] {
        let target = Int.random(in: 260...340, using: &random)
        var out: [UInt8] = []
        out.reserveCapacity(target + 16)
        out += #"{"id":""#.utf8
        for (index, byte) in id.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { out.append(UInt8(ascii: "-")) }
            out.append(Self.hex[Int(byte >> 4)])
            out.append(Self.hex[Int(byte & 15)])
        }
        out += #"","name":"user \#(serial)","email":"user\#(serial)@example.com","#.utf8
        out += #""score":\#(random.next() % 100_000),"tags":[""#.utf8
        out += pick(Self.tags) + #"",""#.utf8 + pick(Self.tags)
        let month = 1 + random.next() % 12, day = 10 + random.next() % 18
        let hour = 10 + random.next() % 14, minute = 10 + random.next() % 50, second = 10 + random.next() % 50
        out += #""],"created":"2024-\#(month < 10 ? "0" : "")\#(month)-\#(day)T\#(hour):\#(minute):\#(second)Z","bio":""#.utf8
        while out.count < target - 2 {
            if out.last != UInt8(ascii: "\"") { out.append(UInt8(ascii: " ")) }
            out += pick(Self.words)
        }
        out += #""}"#.utf8
        return out
    }

    private mutating func pick(_ list: [[UInt8]]) -> [UInt8] {
        list[Int(random.next() % UInt64(list.count))]
    }

    private static let hex = Array("0123456789abcdef".utf8)

    private static let tags: [[UInt8]] = [
        "swift", "ios", "linux", "admin", "beta", "pro", "free", "trial", "eu", "us", "apac", "staff",
    ].map { Array($0.utf8) }

    private static let words: [[UInt8]] = """
        able acid aged also area army away baby back ball band bank base bath bear beat been beer \
        bell belt best bill bird blow blue boat body bomb bond bone book boom born boss both bowl \
        bulk burn bush busy call calm came camp card care case cash cast cell chat chip city club \
        coal coat code cold come cook cool cope copy core cost crew crop dark data date dawn days \
        dead deal dean dear debt deep deny desk dial diet disc disk does done door dose down draw \
        drew drop drug dual duke dust duty each earn ease east easy edge else even ever evil exit \
        face fact fail fair fall farm fast fate fear feed feel feet fell felt file fill film find \
        fine fire firm fish five flat flow food foot ford form fort four free from fuel full fund \
        gain game gate gave gear gene gift girl give glad goal goes gold golf gone good gray grew \
        grey grow gulf hair half hall hand hang hard harm hate have head hear heat held hell help \
        here hero high hill hire hold hole holy home hope host hour huge hung hunt hurt idea inch \
        into iron item jack jane jean john join jump jury just keen keep kent kept kick kill kind \
        king knee knew know lack lady laid lake land lane last late lead left less life lift like \
        line link list live load loan lock logo long look lord lose loss lost love luck made mail \
        main make male many mark mass matt meal mean meat meet menu mere mike mile milk mill mind \
        mine miss mode mood moon more most move much must name navy near neck need news next nice \
        nick nine none nose note okay once only onto open oral over pace pack page paid pain pair \
        palm park part pass past path peak pick pink pipe plan play plot plug plus poll pool poor \
        port post pull pure push race rail rain rank rare rate read real rear rely rent rest rice \
        rich ride ring rise risk road rock role roll roof room root rose rule rush ruth safe said \
        sake sale salt same sand save seat seed seek seem seen self sell send sent sept ship shop \
        shot show shut sick side sign site size skin slip slow snow soft soil sold sole some song \
        soon sort soul spot star stay step stop such suit sure take tale talk tall tank tape task \
        team tech tell tend term test text than that them then they thin this thus till time tiny \
        told toll tone tony took tool tour town tree trip true tune turn twin type unit upon used \
        user vary vast very vice view vote wage wait wake walk wall want ward warm wash wave ways \
        weak wear week well went were west what when whom wide wife wild will wind wine wing wire \
        wise wish with wood word wore work yard yeah year your zero zone
        """.split(separator: " ").map { Array($0.utf8) }
}
