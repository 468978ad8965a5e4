import { describe, expect, it } from "vitest"
import {
  type Chunk,
  chunk,
  estimateTokens,
  MAX_TOKENS,
  MIN_TOKENS,
  OVERLAP_TOKENS,
  TARGET_TOKENS
} from "../../src/knowledge/Chunking.ts"

/** `count` distinct words, `tag1 … tagN`, so that every word of a chunk says where it came from. */
const wordsOf = (tag: string, count: number, from = 1) =>
  Array.from({ length: count }, (_, i) => `${tag}${from + i}`).join(" ")
/** 120 tokens are 92 words (92 × 1.3 = 119.6). */
const OVERLAP_WORDS = 92
const lastWords = (text: string, count = OVERLAP_WORDS) => text.split(/\s+/).slice(-count).join(" ")
/** Ten words, ending a sentence. */
const sentence = (n: number) => `Sentence ${n} tells the customer one more thing about orders.`
const sentences = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => sentence(from + i)).join(" ")

/** Each chunk's own body: the prefix and, when it continues its section, the overlap taken off. */
const bodies = (chunks: ReadonlyArray<Chunk>): ReadonlyArray<string> => {
  const out: Array<string> = []
  chunks.forEach((piece, index) => {
    const prefix = piece.heading === null ? "" : `Section: ${piece.heading}\n\n`
    expect(piece.text.startsWith(prefix)).toBe(true)
    const rest = piece.text.slice(prefix.length)
    const previous = chunks[index - 1]
    if (previous === undefined || previous.heading !== piece.heading) {
      out.push(rest)
      return
    }
    const carried = `${lastWords(out[index - 1]!)}\n\n`
    expect(rest.startsWith(carried)).toBe(true)
    out.push(rest.slice(carried.length))
  })
  return out
}

describe("estimating tokens", () => {
  it("counts whitespace-separated words × 1.3, rounded up, and fixes the packing constants", () => {
    expect([TARGET_TOKENS, MIN_TOKENS, MAX_TOKENS, OVERLAP_TOKENS]).toEqual([600, 400, 800, 120])
    expect(estimateTokens("")).toBe(0)
    expect(estimateTokens("  \n\t ")).toBe(0)
    expect(estimateTokens("one")).toBe(2)
    expect(estimateTokens("one\ttwo\n\nthree  four")).toBe(6)
    // 10 × 1.3 is 13 exactly, not 14 through floating point.
    expect(estimateTokens(wordsOf("w", 10))).toBe(13)
    expect(estimateTokens(wordsOf("w", OVERLAP_WORDS))).toBe(120)
    expect(estimateTokens(wordsOf("w", 93))).toBe(121)
    expect(estimateTokens(wordsOf("w", 615))).toBe(800)
    expect(estimateTokens(wordsOf("w", 616))).toBe(801)
  })
})

describe("chunking", () => {
  it("gives nothing for empty or blank content, or for headings with no body", () => {
    expect(chunk("", "markdown")).toEqual([])
    expect(chunk("", "text")).toEqual([])
    expect(chunk("  \n\n\t\r\n \r\n", "markdown")).toEqual([])
    expect(chunk("  \n\n\t\r\n \r\n", "text")).toEqual([])
    expect(chunk("# Shipping\n\n## Fees\n\n", "markdown")).toEqual([])
  })

  it("gives a short document exactly one chunk: the section prefix, a blank line, then the body", () => {
    const content = "# Returns\n\nYou can return any item within 7 days.\n\nRefunds take 5 business days."
    expect(chunk(content, "markdown")).toEqual([
      {
        position: 0,
        heading: "Returns",
        text: "Section: Returns\n\nYou can return any item within 7 days.\n\nRefunds take 5 business days."
      }
    ])
    expect(chunk("We open at 9.\nWe close at 18.", "text")).toEqual([
      { position: 0, heading: null, text: "We open at 9.\nWe close at 18." }
    ])
  })

  it("tracks the heading path, a heading of level n replacing the path from level n down", () => {
    const content = [
      "Welcome to the store.",
      "# Shipping",
      "We ship daily.",
      "## Fees",
      "R$ 12 flat.",
      "### Express",
      "R$ 30.",
      "## Zones",
      "Brazil only.",
      "#### Remote",
      "Two more days.",
      "### North",
      "Three more days.",
      "# Returns",
      "7 days."
    ].join("\n\n")
    expect(chunk(content, "markdown")).toEqual([
      { position: 0, heading: null, text: "Welcome to the store." },
      { position: 1, heading: "Shipping", text: "Section: Shipping\n\nWe ship daily." },
      { position: 2, heading: "Shipping > Fees", text: "Section: Shipping > Fees\n\nR$ 12 flat." },
      { position: 3, heading: "Shipping > Fees > Express", text: "Section: Shipping > Fees > Express\n\nR$ 30." },
      { position: 4, heading: "Shipping > Zones", text: "Section: Shipping > Zones\n\nBrazil only." },
      {
        position: 5,
        heading: "Shipping > Zones > Remote",
        text: "Section: Shipping > Zones > Remote\n\nTwo more days."
      },
      {
        position: 6,
        heading: "Shipping > Zones > North",
        text: "Section: Shipping > Zones > North\n\nThree more days."
      },
      { position: 7, heading: "Returns", text: "Section: Returns\n\n7 days." }
    ])
    // A deeper heading met first does not stay in the path under a shallower one that follows.
    expect(chunk("# A\n\n### C\n\nc.\n\n## B\n\nb.", "markdown").map((piece) => piece.heading)).toEqual([
      "A > C",
      "A > B"
    ])
  })

  it("reads only ATX headings: closing #s dropped, a # without a space or a seventh # is text", () => {
    const content =
      "# Title ##\n\nOne.\n\n   ## C#\n\n#hashtag stays.\n\n####### seven stays.\nHeading below:\n# Next\nTwo."
    expect(chunk(content, "markdown")).toEqual([
      { position: 0, heading: "Title", text: "Section: Title\n\nOne." },
      {
        position: 1,
        heading: "Title > C#",
        text: "Section: Title > C#\n\n#hashtag stays.\n\n####### seven stays.\nHeading below:"
      },
      { position: 2, heading: "Next", text: "Section: Next\n\nTwo." }
    ])
  })

  it("interprets no heading in plain text: a line starting with # is body", () => {
    expect(chunk("# Title\n\n## Sub\nBody.", "text")).toEqual([
      { position: 0, heading: null, text: "# Title\n\n## Sub\nBody." }
    ])
  })

  it("keeps a fenced code block whole: a # in it is no heading and a blank line in it no break", () => {
    const content = [
      "# Setup",
      "",
      "Run this:",
      "```sh",
      "# install",
      "",
      "npm ci",
      "",
      "# start",
      "npm start",
      "```",
      "~~~",
      "## not a heading either",
      "~~~",
      "```code``` inline is no fence.",
      "",
      "# Done",
      "",
      "```",
      "an unclosed fence runs to the end",
      "",
      "# still code"
    ].join("\n")
    expect(chunk(content, "markdown")).toEqual([
      {
        position: 0,
        heading: "Setup",
        text: [
          "Section: Setup",
          "",
          "Run this:",
          "",
          "```sh\n# install\n\nnpm ci\n\n# start\nnpm start\n```",
          "",
          "~~~\n## not a heading either\n~~~",
          "",
          "```code``` inline is no fence."
        ].join("\n")
      },
      {
        position: 1,
        heading: "Done",
        text: "Section: Done\n\n```\nan unclosed fence runs to the end\n\n# still code"
      }
    ])
  })

  it("keeps a code block under 800 tokens whole in a chunk of its own rather than splitting it", () => {
    // 550 words of code (715 tokens) after 100 words of prose: together 845 tokens, over the maximum.
    const code = ["```ts", ...Array.from({ length: 137 }, (_, i) => `let v${i} = ${i}`), "```"].join("\n")
    const prose = wordsOf("p", 100)
    const chunks = chunk(`# Code\n\n${prose}\n\n${code}`, "markdown")
    expect(chunks).toEqual([
      { position: 0, heading: "Code", text: `Section: Code\n\n${prose}` },
      { position: 1, heading: "Code", text: `Section: Code\n\n${lastWords(prose)}\n\n${code}` }
    ])
  })

  it("cuts a code block over 800 tokens at lines, fencing every piece again", () => {
    // 250 lines of 4 words: 1000 words. A piece holds 461 words, less the 2 fence lines: 114 lines.
    const lines = Array.from({ length: 250 }, (_, i) => `const v${i} = ${i}`)
    const fenced = (from: number, to: number) => ["```ts", ...lines.slice(from, to), "```"].join("\n")
    const chunks = chunk(["```ts", ...lines, "```"].join("\n"), "markdown")
    expect(bodies(chunks)).toEqual([fenced(0, 114), fenced(114, 228), fenced(228, 250)])
    expect(chunks.map((piece) => piece.position)).toEqual([0, 1, 2])
    for (const body of bodies(chunks)) expect(estimateTokens(body)).toBeLessThanOrEqual(MAX_TOKENS)
  })

  it("normalises CRLF line endings and trailing whitespace", () => {
    const crlf = "# Hours  \r\n\r\nMonday to Friday.   \r\nNine to six.\t\r\n \r\n\r\nClosed on holidays.\r\n"
    const expected = [
      {
        position: 0,
        heading: "Hours",
        text: "Section: Hours\n\nMonday to Friday.\nNine to six.\n\nClosed on holidays."
      }
    ]
    expect(chunk(crlf, "markdown")).toEqual(expected)
    expect(chunk(crlf.replaceAll("\r\n", "\n"), "markdown")).toEqual(expected)
  })

  it("packs blocks greedily while the chunk stays within 600 tokens", () => {
    // Ten paragraphs of 100 words (130 tokens): four make 520 tokens, a fifth would make 650.
    const paragraphs = Array.from({ length: 10 }, (_, i) => wordsOf(`p${i + 1}w`, 100))
    const chunks = chunk(paragraphs.join("\n\n"), "text")
    const first = paragraphs.slice(0, 4).join("\n\n")
    const second = paragraphs.slice(4, 8).join("\n\n")
    expect(chunks).toEqual([
      { position: 0, heading: null, text: first },
      { position: 1, heading: null, text: `${wordsOf("p4w", 92, 9)}\n\n${second}` },
      { position: 2, heading: null, text: `${wordsOf("p8w", 92, 9)}\n\n${paragraphs.slice(8).join("\n\n")}` }
    ])
    expect(bodies(chunks).map(estimateTokens)).toEqual([520, 520, 260])
  })

  it("lets a chunk under 400 tokens take a block up to 800 tokens, and never past it", () => {
    // 300 words are 390 tokens, under the minimum: a second block joins (780 tokens), a third does not.
    const small = [wordsOf("a", 300), wordsOf("b", 300), wordsOf("c", 300)]
    expect(bodies(chunk(small.join("\n\n"), "text"))).toEqual([`${small[0]}\n\n${small[1]}`, small[2]])
    // 310 words are 403 tokens, at the minimum: the chunk closes at the target.
    const enough = [wordsOf("a", 310), wordsOf("b", 310)]
    expect(bodies(chunk(enough.join("\n\n"), "text"))).toEqual(enough)
    // 260 + 585 tokens would pass the maximum, though the first block is under the minimum.
    const over = [wordsOf("a", 200), wordsOf("b", 450)]
    expect(bodies(chunk(over.join("\n\n"), "text"))).toEqual(over)
  })

  it("carries the previous chunk's last 120 tokens into the next chunk of its section, never into a new section", () => {
    const paragraphs = Array.from({ length: 5 }, (_, i) => wordsOf(`p${i + 1}w`, 100))
    const content = `# Policy\n\n${paragraphs.join("\n\n")}\n\n# Contact\n\nEmail us.\n\n## Phone\n\nCall us.`
    const chunks = chunk(content, "markdown")
    const overlap = wordsOf("p4w", OVERLAP_WORDS, 9)
    expect(estimateTokens(overlap)).toBe(OVERLAP_TOKENS)
    expect(chunks).toEqual([
      { position: 0, heading: "Policy", text: `Section: Policy\n\n${paragraphs.slice(0, 4).join("\n\n")}` },
      { position: 1, heading: "Policy", text: `Section: Policy\n\n${overlap}\n\n${paragraphs[4]}` },
      { position: 2, heading: "Contact", text: "Section: Contact\n\nEmail us." },
      { position: 3, heading: "Contact > Phone", text: "Section: Contact > Phone\n\nCall us." }
    ])
  })

  it("cuts a block over 800 tokens at sentence ends, or at line breaks, keeping them", () => {
    // 100 sentences of 10 words: 46 of them (460 words, 598 tokens) fill a piece.
    const chunks = chunk(`# Terms\n\n${sentences(0, 100)}`, "markdown")
    expect(bodies(chunks)).toEqual([sentences(0, 46), sentences(46, 92), sentences(92, 100)])
    expect(chunks[1]!.text).toBe(`Section: Terms\n\n${lastWords(sentences(0, 46))}\n\n${sentences(46, 92)}`)
    expect(chunks.map((piece) => piece.heading)).toEqual(["Terms", "Terms", "Terms"])
    // Lines without a full stop: 90 lines of 10 words, cut between lines, each line break kept.
    const lines = Array.from({ length: 90 }, (_, i) => `line ${i} ${wordsOf("x", 8)}`)
    expect(bodies(chunk(lines.join("\n"), "text"))).toEqual([lines.slice(0, 46).join("\n"), lines.slice(46).join("\n")])
  })

  it("cuts a sentence over 800 tokens at words", () => {
    const chunks = chunk(`${wordsOf("w", 1500)}.`, "text")
    expect(bodies(chunks)).toEqual([
      wordsOf("w", 461),
      wordsOf("w", 461, 462),
      wordsOf("w", 461, 923),
      `${wordsOf("w", 116, 1384)} w1500.`
    ])
    expect(chunks[1]!.text).toBe(`${wordsOf("w", OVERLAP_WORDS, 370)}\n\n${wordsOf("w", 461, 462)}`)
  })

  it("keeps every body within 800 tokens and numbers the chunks from 0 across sections", () => {
    const content = [
      "Preamble.",
      "# Catalogue",
      ...Array.from({ length: 7 }, (_, i) => wordsOf(`c${i}w`, 170 + i * 40)),
      "## Huge",
      `${sentences(0, 150)}\n${wordsOf("run", 900)}`,
      "## Code",
      ["```", ...Array.from({ length: 400 }, (_, i) => `x${i} y${i}`), "```"].join("\n"),
      "# End",
      "Bye."
    ].join("\n\n")
    const chunks = chunk(content, "markdown")
    expect(chunks.map((piece) => piece.position)).toEqual(chunks.map((_, index) => index))
    expect(chunks[0]).toEqual({ position: 0, heading: null, text: "Preamble." })
    expect(chunks.at(-1)).toEqual({ position: chunks.length - 1, heading: "End", text: "Section: End\n\nBye." })
    expect(new Set(chunks.map((piece) => piece.heading))).toEqual(
      new Set([null, "Catalogue", "Catalogue > Huge", "Catalogue > Code", "End"])
    )
    for (const body of bodies(chunks)) {
      expect(body.trim().length).toBeGreaterThan(0)
      expect(estimateTokens(body)).toBeLessThanOrEqual(MAX_TOKENS)
    }
  })

  it("is deterministic: the same input gives the same chunks", () => {
    const content = `# A\n\n${sentences(0, 120)}\n\n## B\n\n${wordsOf("b", 700)}`
    expect(chunk(content, "markdown")).toEqual(chunk(content, "markdown"))
    expect(JSON.stringify(chunk(content, "markdown"))).toBe(JSON.stringify(chunk(content, "markdown")))
  })
})
