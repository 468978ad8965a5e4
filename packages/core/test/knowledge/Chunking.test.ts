import { describe, expect, it } from "vitest"
import { chunk, estimateTokens, MAX_TOKENS } from "../../src/knowledge/Chunking.ts"

const sentence = (n: number) => `Sentence ${n} tells the customer one more thing about orders.`
/** A paragraph of `count` ten-word sentences. */
const paragraph = (from: number, count: number) => Array.from({ length: count }, (_, i) => sentence(from + i)).join(" ")

describe("chunking", () => {
  it("makes one chunk per section, prefixed with its heading path", () => {
    const chunks = chunk(
      "Intro line.\n\n# Shipping\n\nWe ship.\n\n## Fees\n\nR$ 12.\n\n# Returns\n\n7 days.",
      "markdown"
    )
    expect(chunks).toEqual([
      { position: 0, heading: null, text: "Intro line." },
      { position: 1, heading: "Shipping", text: "Section: Shipping\n\nWe ship." },
      { position: 2, heading: "Shipping > Fees", text: "Section: Shipping > Fees\n\nR$ 12." },
      { position: 3, heading: "Returns", text: "Section: Returns\n\n7 days." }
    ])
  })

  it("reads headings only in markdown, and never inside a code fence, which stays whole", () => {
    expect(chunk("# Not a heading\n\nText.", "text")).toEqual([
      { position: 0, heading: null, text: "# Not a heading\n\nText." }
    ])
    const fenced = chunk("# Setup\n\n```sh\n# a comment\n\nnpm start\n```\n\nDone.", "markdown")
    expect(fenced).toEqual([
      { position: 0, heading: "Setup", text: "Section: Setup\n\n```sh\n# a comment\n\nnpm start\n```\n\nDone." }
    ])
  })

  it("normalises CRLF and gives nothing for blank content", () => {
    expect(chunk("# A\r\n\r\nB.\r\n", "markdown")).toEqual([{ position: 0, heading: "A", text: "Section: A\n\nB." }])
    expect(chunk("  \n\n \r\n", "markdown")).toEqual([])
  })

  it("packs a long section into chunks of at most 800 tokens, each continuing the last with its closing words", () => {
    const content = `# Policy\n\n${Array.from({ length: 12 }, (_, i) => paragraph(i * 10, 10)).join("\n\n")}`
    const chunks = chunk(content, "markdown")
    expect(chunks.length).toBeGreaterThan(1)
    for (const [index, piece] of chunks.entries()) {
      expect(piece.position).toBe(index)
      expect(piece.heading).toBe("Policy")
      expect(piece.text.startsWith("Section: Policy\n\n")).toBe(true)
    }
    // The second chunk opens with the first one's last words (the overlap), then its own blocks.
    const first = chunks[0]!.text.split(/\s+/)
    const second = chunks[1]!.text.replace("Section: Policy\n\n", "")
    expect(second.startsWith(first.slice(-92).join(" "))).toBe(true)
  })

  it("cuts a block larger than the maximum at sentence ends, and a sentence larger than it at words", () => {
    const huge = paragraph(0, 100)
    const pieces = chunk(huge, "text")
    expect(pieces.length).toBeGreaterThan(1)
    expect(estimateTokens(pieces[0]!.text)).toBeLessThanOrEqual(MAX_TOKENS)
    expect(pieces[0]!.text.endsWith(".")).toBe(true)
    const oneSentence = chunk(`${"word ".repeat(1500).trim()}.`, "text")
    expect(oneSentence.length).toBe(3)
    expect(estimateTokens(oneSentence[0]!.text)).toBeLessThanOrEqual(MAX_TOKENS)
  })
})
