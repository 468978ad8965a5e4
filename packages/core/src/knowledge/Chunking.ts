/**
 * Markdown-aware chunking (CONTRACT-COMMERCE-AI §4, after Chatwoot Captain's ChunkingService):
 * blocks split on blank lines, each chunk in one heading path and prefixed with it
 * (`Section: A > B`), packed to about 600 estimated tokens (400 to 800), with 120 tokens of the
 * previous chunk carried into the next one of the same section. Pure and deterministic.
 */

export interface Chunk {
  readonly position: number
  /** The heading path, `A > B`; null before the first heading and for plain text. */
  readonly heading: string | null
  readonly text: string
}

export const TARGET_TOKENS = 600
export const MIN_TOKENS = 400
export const MAX_TOKENS = 800
export const OVERLAP_TOKENS = 120

const words = (text: string): ReadonlyArray<string> => text.split(/\s+/).filter((word) => word.length > 0)

/** Tokens as words × 1.3, rounded up: close enough for English and Portuguese prose. */
export const estimateTokens = (text: string): number => Math.ceil(words(text).length * 1.3)

interface Section {
  readonly path: ReadonlyArray<string>
  readonly blocks: Array<string>
}

const HEADING = /^(#{1,6})\s+(.+?)\s*#*\s*$/
const FENCE = /^\s*(```|~~~)/

/** The content's sections, each with its heading path and its blocks (code fences kept whole). */
const sections = (content: string, kind: "text" | "markdown"): ReadonlyArray<Section> => {
  const lines = content
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((line) => line.trimEnd())
  const result: Array<Section> = []
  let path: Array<string> = []
  let current: Section = { path, blocks: [] }
  let block: Array<string> = []
  let fence: string | undefined
  const endBlock = () => {
    const text = block.join("\n").trim()
    if (text.length > 0) current.blocks.push(text)
    block = []
  }
  for (const line of lines) {
    if (fence !== undefined) {
      block.push(line)
      if (line.trim().startsWith(fence)) {
        fence = undefined
        endBlock()
      }
      continue
    }
    const opens = kind === "markdown" ? FENCE.exec(line) : null
    if (opens !== null) {
      endBlock()
      fence = opens[1]
      block.push(line)
      continue
    }
    const heading = kind === "markdown" ? HEADING.exec(line) : null
    if (heading !== null) {
      endBlock()
      if (current.blocks.length > 0) result.push(current)
      path = [...path.slice(0, heading[1]!.length - 1), heading[2]!]
      current = { path: path.filter((part) => part !== undefined), blocks: [] }
      continue
    }
    if (line.trim().length === 0) endBlock()
    else block.push(line)
  }
  endBlock()
  if (current.blocks.length > 0) result.push(current)
  return result
}

/** A block too big for one chunk, cut at sentence ends, then at words, into pieces of at most MAX_TOKENS. */
const pieces = (block: string): ReadonlyArray<string> => {
  if (estimateTokens(block) <= MAX_TOKENS) return [block]
  const sentences = block.split(/(?<=[.!?])\s+|\n+/).filter((sentence) => sentence.trim().length > 0)
  const out: Array<string> = []
  let current: Array<string> = []
  const flush = () => {
    if (current.length > 0) out.push(current.join(" "))
    current = []
  }
  for (const sentence of sentences) {
    if (estimateTokens(sentence) > MAX_TOKENS) {
      flush()
      const all = words(sentence)
      const size = Math.floor(MAX_TOKENS / 1.3)
      for (let at = 0; at < all.length; at += size) out.push(all.slice(at, at + size).join(" "))
      continue
    }
    if (estimateTokens([...current, sentence].join(" ")) > MAX_TOKENS) flush()
    current.push(sentence)
  }
  flush()
  return out
}

/** The last words of a chunk's body worth OVERLAP_TOKENS, carried to the start of the next. */
const tail = (body: string): string => {
  const all = words(body)
  return all.slice(Math.max(0, all.length - Math.floor(OVERLAP_TOKENS / 1.3))).join(" ")
}

/**
 * The chunks of a source. The prefix and the overlap are not counted against MAX_TOKENS: a chunk's
 * own blocks are, so what a chunk adds is bounded whatever its heading.
 */
export const chunk = (content: string, kind: "text" | "markdown"): ReadonlyArray<Chunk> => {
  const chunks: Array<Chunk> = []
  for (const section of sections(content, kind)) {
    const heading = section.path.length === 0 ? null : section.path.join(" > ")
    const bodies: Array<string> = []
    let current: Array<string> = []
    const close = () => {
      if (current.length > 0) bodies.push(current.join("\n\n"))
      current = []
    }
    for (const block of section.blocks.flatMap(pieces)) {
      const together = estimateTokens([...current, block].join("\n\n"))
      if (current.length > 0 && (together > MAX_TOKENS || estimateTokens(current.join("\n\n")) >= TARGET_TOKENS)) {
        close()
      }
      current.push(block)
    }
    close()
    bodies.forEach((body, index) => {
      const overlapped = index === 0 ? body : `${tail(bodies[index - 1]!)}\n\n${body}`
      chunks.push({
        position: chunks.length,
        heading,
        text: heading === null ? overlapped : `Section: ${heading}\n\n${overlapped}`
      })
    })
  }
  return chunks
}
