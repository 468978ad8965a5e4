/**
 * Markdown-aware chunking of a knowledge source (docs/contract-commerce-ai.md §4 "Chunking", after
 * Chatwoot Captain's ChunkingService).
 *
 * - The content is split on blank lines into blocks; a fenced code block (``` or ~~~) is one block
 *   whatever blank lines or `#` lines it holds.
 * - In markdown, ATX headings (`#` … `######`) are tracked as a path: a heading of level n replaces
 *   the path from level n down. Heading lines are not body text: they become the chunk's prefix,
 *   `Section: A > B` and a blank line. Every heading closes the chunk, so each chunk belongs to
 *   exactly one heading path; what precedes the first heading has the heading null.
 * - Blocks are packed greedily to TARGET_TOKENS; a chunk still under MIN_TOKENS may grow up to
 *   MAX_TOKENS rather than stay small. A block over MAX_TOKENS is cut at sentence ends or line
 *   breaks (code: at line breaks), and a sentence still too big at words.
 * - A chunk that continues the previous one's section opens with the previous body's last words
 *   worth OVERLAP_TOKENS, so a passage cut in two is still findable whole; a new section starts fresh.
 *
 * Tokens are estimated, not counted (words × 1.3, rounded up): the chunker stays pure, free of any
 * tokenizer, and deterministic.
 */

export interface Chunk {
  /** From 0, in document order across all sections. */
  readonly position: number
  /** The heading path, `A > B`; null before the first heading and for plain text. */
  readonly heading: string | null
  /** The body, after the `Section: …` prefix and the overlap when there are any. */
  readonly text: string
}

export const TARGET_TOKENS = 600
export const MIN_TOKENS = 400
export const MAX_TOKENS = 800
export const OVERLAP_TOKENS = 120

const words = (text: string): ReadonlyArray<string> => text.split(/\s+/).filter((word) => word.length > 0)

/** Integer arithmetic: `10 * 1.3` in floating point could round up to 14. */
const tokensOf = (wordCount: number): number => Math.ceil((wordCount * 13) / 10)

/** The most words whose estimate stays within `tokens`. */
const wordsWithin = (tokens: number): number => Math.floor((tokens * 10) / 13)

/** Tokens as whitespace-separated words × 1.3, rounded up: close enough for English and Portuguese prose. */
export const estimateTokens = (text: string): number => tokensOf(words(text).length)

interface Block {
  readonly text: string
  readonly words: number
}

interface Fence {
  readonly open: string
  readonly marker: string
}

interface FencedBlock extends Block {
  readonly fence: Fence
  /** The lines between the fence lines. */
  readonly inner: ReadonlyArray<string>
  readonly close: string | undefined
}

interface Section {
  readonly heading: string | null
  readonly blocks: ReadonlyArray<Block | FencedBlock>
}

const block = (text: string): Block => ({ text, words: words(text).length })

// CommonMark: up to three spaces of indentation (four make indented code, not a heading).
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*))?$/
// A backtick fence's info string may not hold a backtick, so "```x```" on one line is inline code.
const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})(.*)$/

const opensFence = (line: string): Fence | undefined => {
  const match = FENCE_OPEN.exec(line)
  if (match === null) return undefined
  const marker = match[1]!
  if (marker.startsWith("`") && match[2]!.includes("`")) return undefined
  return { open: line, marker }
}

const closesFence = (line: string, fence: Fence): boolean => {
  const trimmed = line.trim()
  // The closing fence is the same character, at least as long, with nothing after it.
  return (
    line.length - line.trimStart().length <= 3 &&
    trimmed.length >= fence.marker.length &&
    trimmed === fence.marker[0]!.repeat(trimmed.length)
  )
}

/** The heading's title, its optional closing `#`s removed (`# C#` keeps its `#`: no space before it). */
const title = (rest: string | undefined): string => (rest ?? "").replace(/(?:^|[ \t]+)#+$/, "").trim()

/** The content's sections, each with its heading path and its blocks. */
const sections = (content: string, kind: "text" | "markdown"): ReadonlyArray<Section> => {
  const lines = content
    .replace(/^\uFEFF/, "")
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((line) => line.trimEnd())
  const markdown = kind === "markdown"
  const result: Array<Section> = []
  // Each entry keeps its level, so that `### C` then `## B` gives `A > B`, not `A > C > B`.
  let path: Array<{ readonly level: number; readonly title: string }> = []
  let heading: string | null = null
  let blocks: Array<Block | FencedBlock> = []
  let paragraph: Array<string> = []
  let fence: { readonly fence: Fence; readonly inner: Array<string> } | undefined

  const endParagraph = () => {
    if (paragraph.length > 0) blocks.push(block(paragraph.join("\n")))
    paragraph = []
  }
  const endFence = (close: string | undefined) => {
    if (fence === undefined) return
    const all = [fence.fence.open, ...fence.inner, ...(close === undefined ? [] : [close])]
    blocks.push({ ...block(all.join("\n")), fence: fence.fence, inner: fence.inner, close })
    fence = undefined
  }
  const endSection = () => {
    endParagraph()
    if (blocks.length > 0) result.push({ heading, blocks })
    blocks = []
  }

  for (const line of lines) {
    if (fence !== undefined) {
      if (closesFence(line, fence.fence)) endFence(line)
      else fence.inner.push(line)
      continue
    }
    const opened = markdown ? opensFence(line) : undefined
    if (opened !== undefined) {
      endParagraph()
      fence = { fence: opened, inner: [] }
      continue
    }
    const match = markdown ? HEADING.exec(line) : null
    if (match !== null) {
      endSection()
      const level = match[1]!.length
      const text = title(match[2])
      // An empty heading (`#` alone) still ends the path at its level, and adds nothing to it.
      path = [...path.filter((entry) => entry.level < level), ...(text.length > 0 ? [{ level, title: text }] : [])]
      heading = path.length === 0 ? null : path.map((entry) => entry.title).join(" > ")
      continue
    }
    if (line.trim().length === 0) endParagraph()
    else paragraph.push(line)
  }
  // An unclosed fence runs to the end of the document, as in CommonMark.
  endFence(undefined)
  endSection()
  return result
}

interface Segment {
  readonly text: string
  /** What separated it from the next segment in the source, kept when both land in one piece. */
  readonly separator: string
}

/** The text cut at each match of `boundary` (a zero-width lookbehind keeps the punctuation). */
const segments = (text: string, boundary: RegExp): ReadonlyArray<Segment> => {
  const out: Array<Segment> = []
  let from = 0
  for (const match of text.matchAll(boundary)) {
    out.push({ text: text.slice(from, match.index), separator: match[0] })
    from = match.index + match[0].length
  }
  out.push({ text: text.slice(from), separator: "" })
  return out.filter((segment) => segment.text.trim().length > 0)
}

const SENTENCE_END = /(?<=[.!?])[ \t]+|\n+/g
const LINE_BREAK = /\n+/g

/** Segments packed greedily into pieces of at most `limit` words; a segment over it is cut at words. */
const pack = (all: ReadonlyArray<Segment>, limit: number): ReadonlyArray<string> => {
  const out: Array<string> = []
  let current: Array<Segment> = []
  let count = 0
  const flush = () => {
    if (current.length > 0) {
      out.push(
        current.map((segment, index) => segment.text + (index < current.length - 1 ? segment.separator : "")).join("")
      )
    }
    current = []
    count = 0
  }
  for (const segment of all) {
    const size = words(segment.text).length
    if (size > limit) {
      flush()
      const split = words(segment.text)
      for (let at = 0; at < split.length; at += limit) out.push(split.slice(at, at + limit).join(" "))
      continue
    }
    if (count + size > limit) flush()
    current.push(segment)
    count += size
  }
  flush()
  return out
}

/**
 * A block as pieces that each fit in a chunk. Only a block over MAX_TOKENS is cut, and then into
 * pieces of about TARGET_TOKENS, so that the chunks it makes are of the usual size.
 */
const pieces = (item: Block | FencedBlock): ReadonlyArray<Block> => {
  if (tokensOf(item.words) <= MAX_TOKENS) return [item]
  const limit = wordsWithin(TARGET_TOKENS)
  if ("fence" in item) {
    const close = item.close ?? item.fence.marker
    const fenceWords = words(item.fence.open).length + words(close).length
    // Code is cut at lines, and each piece is fenced again so it still reads as code.
    if (fenceWords < limit / 2) {
      return pack(segments(item.inner.join("\n"), LINE_BREAK), limit - fenceWords).map((inner) =>
        block(`${item.fence.open}\n${inner}\n${close}`)
      )
    }
  }
  return pack(segments(item.text, SENTENCE_END), limit).map(block)
}

/** The last words of a body worth OVERLAP_TOKENS, whole words only. */
const overlap = (body: string): string => words(body).slice(-wordsWithin(OVERLAP_TOKENS)).join(" ")

/**
 * The chunks of a source, in order. Only a chunk's own blocks count against MAX_TOKENS: the
 * `Section:` prefix and the overlap come on top (at most OVERLAP_TOKENS plus the heading path), so a
 * chunk's new content is bounded whatever its heading and however it continues the previous one.
 */
export const chunk = (content: string, kind: "text" | "markdown"): ReadonlyArray<Chunk> => {
  const chunks: Array<Chunk> = []
  for (const section of sections(content, kind)) {
    const bodies: Array<string> = []
    let current: Array<Block> = []
    let count = 0
    const close = () => {
      if (current.length > 0) bodies.push(current.map((item) => item.text).join("\n\n"))
      current = []
      count = 0
    }
    for (const piece of section.blocks.flatMap(pieces)) {
      const together = tokensOf(count + piece.words)
      // Fill to the target; a chunk still under the minimum may take a block up to the maximum.
      const fits = together <= TARGET_TOKENS || (tokensOf(count) < MIN_TOKENS && together <= MAX_TOKENS)
      if (current.length > 0 && !fits) close()
      current.push(piece)
      count += piece.words
    }
    close()
    const prefix = section.heading === null ? "" : `Section: ${section.heading}\n\n`
    bodies.forEach((body, index) => {
      const carried = index === 0 ? "" : `${overlap(bodies[index - 1]!)}\n\n`
      chunks.push({ position: chunks.length, heading: section.heading, text: prefix + carried + body })
    })
  }
  return chunks
}
