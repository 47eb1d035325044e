/// Makes the JSON-like values of the data set: a user record of 260–340 bytes with a random hex
/// id, a name, an e-mail, numbers, tags, a timestamp and a "bio" of words from a list.
///
/// The mix is chosen so that values compress about 2x with zlib (the hex id, the token and the
/// numbers are near-random; the field names, names and words repeat), like typical app data.
public enum ValueGenerator {
    /// The shortest value made.
    public static let minimumLength = 260
    /// The longest value made.
    public static let maximumLength = 340

    /// A value, drawing all its randomness from `rng`.
    public static func value(using rng: inout SplitMix64) -> [UInt8] {
        let target = rng.inRange(minimumLength...maximumLength)
        let first = firstNames[rng.below(firstNames.count)]
        let last = lastNames[rng.below(lastNames.count)]
        var text = "{\"id\":\""
        text += hex(rng.bytes(16))
        text += "\",\"name\":\"\(first) \(last)\""
        text += ",\"email\":\"\(first.lowercased()).\(last.lowercased())\(rng.below(1000))@"
        text += domains[rng.below(domains.count)] + "\""
        text += ",\"age\":\(rng.inRange(18...90))"
        text += ",\"score\":\(rng.below(100_000)).\(twoDigits(rng.below(100)))"
        text += ",\"active\":\(rng.below(4) == 0 ? "false" : "true")"
        text += ",\"token\":\"" + token(rng.bytes(30)) + "\""
        text += ",\"tags\":["
        for index in 0..<rng.inRange(1...4) {
            if index > 0 { text += "," }
            text += "\"" + tags[rng.below(tags.count)] + "\""
        }
        text += "],\"created\":\"20\(rng.inRange(15...25))-\(twoDigits(rng.inRange(1...12)))-"
        text += "\(twoDigits(rng.inRange(1...28)))T\(twoDigits(rng.below(24))):"
        text += "\(twoDigits(rng.below(60))):\(twoDigits(rng.below(60)))Z\""
        text += ",\"bio\":\""
        var bytes = Array(text.utf8)
        // The bio fills the value up to its target length; its last word may be cut.
        let bioEnd = target - 2
        while bytes.count < bioEnd {
            if bytes.last != UInt8(ascii: "\"") { bytes.append(UInt8(ascii: " ")) }
            // Mostly common words, sometimes a rarer one (a name of a place, a project, ...).
            let word = rng.below(2) == 0 ? rareWords[rng.below(rareWords.count)] : words[rng.below(words.count)]
            bytes.append(contentsOf: word.utf8)
        }
        if bytes.count > bioEnd { bytes.removeLast(bytes.count - bioEnd) }
        if bytes.last == UInt8(ascii: " ") { bytes[bytes.count - 1] = UInt8(ascii: ".") }
        bytes.append(contentsOf: "\"}".utf8)
        return bytes
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
    private static let tokenAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static func hex(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(hexDigits[Int(byte >> 4)])
            out.append(hexDigits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Base64url-like text, 4 characters per 3 bytes.
    private static func token(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var index = 0
        while index + 2 < bytes.count {
            let word = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            for shift in stride(from: 18, through: 0, by: -6) {
                out.append(tokenAlphabet[Int((word >> UInt32(shift)) & 63)])
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func twoDigits(_ number: Int) -> String {
        number < 10 ? "0\(number)" : "\(number)"
    }

    private static let firstNames = [
        "Ada", "Alan", "Barbara", "Brian", "Carol", "Claude", "Dennis", "Donald", "Edsger", "Frances",
        "Grace", "Guido", "Hedy", "Ivan", "Jean", "John", "Ken", "Leslie", "Linus", "Margaret",
        "Niklaus", "Olivia", "Peter", "Radia", "Richard", "Sophie", "Tim", "Ursula", "Vint", "Whitfield",
        "Xavier", "Yukihiro", "Zoe", "Anita", "Bjarne", "Cynthia", "Dana", "Emma", "Fernando", "Gilad",
    ]

    private static let lastNames = [
        "Lovelace", "Turing", "Liskov", "Kernighan", "Shaw", "Shannon", "Ritchie", "Knuth", "Dijkstra",
        "Allen", "Hopper", "Rossum", "Lamarr", "Sutherland", "Sammet", "Backus", "Thompson", "Lamport",
        "Torvalds", "Hamilton", "Wirth", "Martin", "Norvig", "Perlman", "Stallman", "Wilson", "Berners",
        "Franklin", "Cerf", "Diffie", "Leroy", "Matsumoto", "Baker", "Borg", "Stroustrup", "Dwork",
        "Scott", "Watson", "Corbato", "Bracha",
    ]

    private static let domains = [
        "example.com", "example.org", "mail.example.net", "corp.example", "users.example.io", "test.example",
    ]

    private static let tags = [
        "admin", "beta", "customer", "developer", "early-adopter", "enterprise", "free", "guest",
        "moderator", "partner", "premium", "staff", "student", "trial", "verified", "vip",
    ]

    /// 4,096 made-up words (two or three syllables), deterministic: the long tail of a vocabulary.
    private static let rareWords: [String] = {
        let syllables = [
            "ka", "lo", "mi", "ren", "tor", "vel", "sa", "qui", "bra", "ne", "dor", "fi", "gal", "hu",
            "jin", "ko", "lus", "mar", "nor", "pel", "ris", "sto", "tan", "ul", "vik", "wen", "xa",
            "yor", "zel", "an", "bel", "cor",
        ]
        var generator = SplitMix64(seed: 0x5EED_0F_B10)
        return (0..<4096).map { _ in
            var word = ""
            for _ in 0..<generator.inRange(2...3) { word += syllables[generator.below(syllables.count)] }
            return word
        }
    }()

    private static let words = [
        "the", "a", "of", "and", "to", "in", "is", "for", "on", "with", "as", "at", "by", "from",
        "loves", "writes", "builds", "enjoys", "studies", "teaches", "ships", "reviews", "designs",
        "storage", "engines", "databases", "compilers", "music", "hiking", "coffee", "gardens",
        "distributed", "systems", "small", "fast", "reliable", "open", "source", "software", "cats",
        "dogs", "travel", "photography", "cooking", "running", "chess", "books", "history", "science",
        "mountains", "rivers", "cities", "friends", "family", "weekends", "projects", "languages",
        "swift", "rust", "kernel", "networks", "security", "testing", "tools", "design", "art",
        "people", "teams", "startups", "research", "papers", "talks", "conferences", "mentoring",
        "cycling", "swimming", "climbing", "sailing", "board", "games", "films", "poetry", "jazz",
        "piano", "guitar", "bread", "tea", "bicycles", "maps", "trains", "planes", "stars", "oceans",
        "every", "day", "since", "years", "now", "lives", "near", "works", "remotely", "team",
    ]
}
