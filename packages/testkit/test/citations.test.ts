import { execFileSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { dirname, join, posix, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

/**
 * A clone of the repository stands on its own: what its code, tests and docs cite is in it.
 *
 * (a) No text names a document by a capitalised name (`ROADMAP.md`, `SALES-PLAYBOOK §2`) that no
 *     tracked file has: the contracts and design notes the project started from were named so,
 *     and their replacements are under docs/.
 * (b) Every `docs/<name>.md` cited anywhere, and every relative link `[text](path)` of a markdown
 *     file (resolved against that file's folder; http(s), mailto and `#anchor` links skipped), is
 *     a file (or folder) the repository tracks.
 * (c) Every `docs/<file>.md §<n>` citation names a section the cited file has. A section is a
 *     markdown heading whose text starts with its number, followed by a dot or a space:
 *     `## 6. AI simulation`, `### 6.3 Cloud adapter`, `### 0a.3 Secrets in every mode`,
 *     `## 13a. Decided`, `## B2. Metrics, traces and logs`. Numbers are digits with an optional
 *     lower-case letter (`0a`, `13a`), or a capital and digits (`A2`, `B2`), then `.<digits>`
 *     parts. A citation may list several (`§1, §3`, `§8.3 and §11`) or a range (`§4–6`,
 *     `§0a.9–10`: 0a.9 and 0a.10); both ends of a range are checked.
 *
 * This file's examples name documents that do not exist, so the scan leaves it out.
 */

/** The repository root, from this file's place in it (packages/testkit/test). */
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..")
const SELF = "packages/testkit/test/citations.test.ts"

interface Problem {
  readonly path: string
  readonly line: number
  readonly message: string
}

const describeProblems = (problems: ReadonlyArray<Problem>): string =>
  problems.map((p) => `${p.path}:${p.line}: ${p.message}`).join("\n")

// (a) ------------------------------------------------------------------------------------------

/**
 * A document named as the contracts and design notes used to be: a capitalised file name
 * (`ROADMAP.md`, `SALES-PLAYBOOK.md`), or a capitalised name cited with a section
 * (`SALES-PLAYBOOK §6.3`, `ROADMAP.md §2`, `SALES-PLAYBOOK B2`). Not a path's tail (`bench/RESULTS.md`) nor an
 * identifier (`LEADLINE_CONTRACT_URL`).
 */
const DOCUMENT_NAME = /(?<![\w./-])([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*)(?![\w-])(\.md\b|(?=\s*§|\s+[A-Z]\d+\b))/g

/**
 * (a) Each document named by a capitalised name that no tracked file has: what a clone would lack.
 * The replacement it suggests is the docs/ file of the same name in lower case, when there is one.
 */
const outsideMentions = (path: string, text: string, tree: Tree, names: ReadonlySet<string>): ReadonlyArray<Problem> =>
  text.split("\n").flatMap((content, index) =>
    [...content.matchAll(DOCUMENT_NAME)].flatMap((match) => {
      const name = match[1]!
      if (match[2] === ".md" && names.has(`${name}.md`)) return []
      const own = `docs/${name.toLowerCase()}.md`
      return [
        {
          path,
          line: index + 1,
          message: `cites ${match[0]}, which is not in the repository: cite ${tree.has(own) ? own : "a file under docs/"}`
        }
      ]
    })
  )

/** The file names of the tracked paths: `README.md`, `RESULTS.md`. */
const fileNames = (paths: ReadonlyArray<string>): ReadonlySet<string> =>
  new Set(paths.map((path) => path.slice(path.lastIndexOf("/") + 1)))

// (b) ------------------------------------------------------------------------------------------

/** `docs/<name>.md` as a path of its own, not the tail of another path or a URL. */
const DOCS_CITATION = /(?<![\w./-])docs\/([\w-]+(?:\/[\w-]+)*\.md)\b/g

/** A markdown link or image: `[text](target)` or `[text](target "title")`. */
const MARKDOWN_LINK = /\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#")

/** What the repository has: its tracked files, and the folders that hold them. */
interface Tree {
  readonly has: (path: string) => boolean
}

const treeOf = (paths: ReadonlyArray<string>): Tree => {
  const files = new Set(paths)
  const folders = new Set(
    paths.flatMap((path) =>
      path
        .split("/")
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join("/"))
    )
  )
  return { has: (path) => files.has(path) || folders.has(path) }
}

/** A markdown link's target as a path from the root, or undefined when it points outside the repository. */
const resolveLink = (from: string, target: string): string | undefined => {
  if (isExternal(target)) return undefined
  let bare = target.replace(/[#?].*$/, "")
  try {
    bare = decodeURIComponent(bare)
  } catch {
    // A stray `%` is part of the name.
  }
  if (bare === "") return undefined
  const path = bare.startsWith("/") ? posix.normalize(bare.slice(1)) : posix.join(posix.dirname(from), bare)
  return path.replace(/\/$/, "")
}

/** (b) Each cited `docs/*.md`, and each relative link of a markdown file, that the tree lacks. */
const missingFiles = (path: string, text: string, tree: Tree): ReadonlyArray<Problem> => {
  const markdown = path.endsWith(".md")
  let fenced = false
  return text.split("\n").flatMap((content, index) => {
    const line = index + 1
    const problems: Array<Problem> = [...content.matchAll(DOCS_CITATION)]
      .filter((match) => !tree.has(`docs/${match[1]}`))
      .map((match) => ({ path, line, message: `cites docs/${match[1]}, which the repository does not have` }))
    if (markdown) {
      if (/^\s*(```|~~~)/.test(content)) fenced = !fenced
      if (!fenced) {
        for (const match of content.matchAll(MARKDOWN_LINK)) {
          const target = resolveLink(path, match[1]!)
          if (target !== undefined && (target.startsWith("../") || !tree.has(target))) {
            problems.push({
              path,
              line,
              message: `links to ${match[1]} (${target}), which the repository does not have`
            })
          }
        }
      }
    }
    return problems
  })
}

// (c) ------------------------------------------------------------------------------------------

const SECTION = String.raw`(?:[A-Z]\d+|\d+[a-z]?)(?:\.\d+)*`

/** `docs/<file>.md`, maybe closing a code span, then `§` and one or more section numbers. */
const SECTION_CITATION = new RegExp(
  String.raw`(?<![\w./-])docs\/([\w-]+\.md)\x60?\s*§\s?(${SECTION})((?:\s*(?:[–-]|,|and)\s*§?\s?${SECTION})*)`,
  "g"
)

/** The numbers a citation names: `2–7, 9–11` → 2, 7, 9, 11; `0a.9–10` → 0a.9, 0a.10. */
const citedSections = (first: string, rest: string): ReadonlyArray<string> => {
  const sections = [first]
  for (const match of rest.matchAll(new RegExp(String.raw`([–-]|,|and)\s*(§?)\s?(${SECTION})`, "g"))) {
    const previous = sections[sections.length - 1]!
    const separator = match[1]!
    const mark = match[2]!
    const number = match[3]!
    // The end of a range written short takes its start's prefix: §0a.9–10 is 0a.9 to 0a.10.
    const short = /^[–-]$/.test(separator) && mark === "" && /^\d+$/.test(number) && previous.includes(".")
    sections.push(short ? `${previous.slice(0, previous.lastIndexOf(".") + 1)}${number}` : number)
  }
  return sections
}

const HEADING = new RegExp(String.raw`^#{1,6}\s+§?(${SECTION})(?:\.\s|\.?$|\s)`)

/** The section numbers a markdown file's headings carry. */
const sectionsOf = (markdown: string): ReadonlySet<string> =>
  new Set(markdown.split("\n").flatMap((line) => HEADING.exec(line)?.[1] ?? []))

/** (c) Each `docs/<file>.md §<n>` whose file has no heading numbered `<n>`. */
const missingSections = (
  path: string,
  text: string,
  sectionsIn: (doc: string) => ReadonlySet<string> | undefined
): ReadonlyArray<Problem> =>
  text.split("\n").flatMap((content, index) =>
    [...content.matchAll(SECTION_CITATION)].flatMap((match) => {
      const doc = `docs/${match[1]}`
      const sections = sectionsIn(doc)
      if (sections === undefined) return [] // (b) reports a missing file
      return citedSections(match[2]!, match[3] ?? "")
        .filter((section) => !sections.has(section))
        .map((section) => ({
          path,
          line: index + 1,
          message: `cites ${doc} §${section}, but ${doc} has no heading numbered ${section}`
        }))
    })
  )

// The repository ----------------------------------------------------------------------------------

const NOT_TEXT = /\.(png|jpe?g|gif|ico|webp|woff2?|ttf|otf|pdf|zip|gz|tgz|wasm)$/i
const LOCKFILES = /(^|\/)(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml)$/

/** Every tracked path (the index: what a clone gets), from `git ls-files`. */
const tracked = (): ReadonlyArray<string> =>
  execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
    .split("\0")
    .filter((path) => path !== "")

interface TextFile {
  readonly path: string
  readonly text: string
}

const textFiles = (paths: ReadonlyArray<string>): ReadonlyArray<TextFile> =>
  paths
    .filter(
      (path) =>
        path !== SELF &&
        !path.split("/").includes("node_modules") &&
        !LOCKFILES.test(path) &&
        !NOT_TEXT.test(path) &&
        existsSync(join(root, path))
    )
    .flatMap((path) => {
      const text = readFileSync(join(root, path), "utf8")
      return text.includes("\0") ? [] : [{ path, text }]
    })

describe("the citation scanner", () => {
  const tree = treeOf(["README.md", "docs/contract.md", "docs/contract-messaging.md", "packages/core/src/Ids.ts"])

  it("finds documents named that the repository lacks, and passes what it has and look-alike identifiers", () => {
    const names = fileNames(["README.md", "bench/RESULTS.md", "docs/glossary.md"])
    const glossary = treeOf(["README.md", "bench/RESULTS.md", "docs/glossary.md"])
    const found = (text: string) => outsideMentions("x.ts", text, glossary, names).map((p) => p.message)
    expect(found("// as SALES-PLAYBOOK §6.3 says, and SALES-PLAYBOOK B2")).toEqual([
      "cites SALES-PLAYBOOK, which is not in the repository: cite a file under docs/",
      "cites SALES-PLAYBOOK, which is not in the repository: cite a file under docs/"
    ])
    expect(found("(ROADMAP.md §4) and GLOSSARY.md and GLOSSARY §2")).toEqual([
      "cites ROADMAP.md, which is not in the repository: cite a file under docs/",
      "cites GLOSSARY.md, which is not in the repository: cite docs/glossary.md",
      "cites GLOSSARY, which is not in the repository: cite docs/glossary.md"
    ])
    expect(
      found(
        "README.md, RESULTS.md, bench/RESULTS.md, docs/glossary.md §2, LEADLINE_CONTRACT_URL, HMAC-SHA256, OWASP API5"
      )
    ).toEqual([])
    expect(outsideMentions("a.md", "one\ntwo ROADMAP.md", glossary, names)[0]).toMatchObject({ path: "a.md", line: 2 })
  })

  it("finds cited docs and relative markdown links the repository lacks", () => {
    const missing = (path: string, text: string) => missingFiles(path, text, tree).map((p) => p.message)
    expect(missing("x.ts", "// docs/contract.md and docs/nowhere.md")).toEqual([
      "cites docs/nowhere.md, which the repository does not have"
    ])
    // A URL's path or another folder's docs/ is not a citation of this repository's docs/.
    expect(missing("x.ts", "https://example.com/docs/guide.md, packages/x/docs/y.md")).toEqual([])
    expect(missing("docs/a.md", "[c](contract.md#errors), [r](../README.md), [m](contract-messaging.md)")).toEqual([])
    expect(missing("docs/a.md", "[w](https://example.com/x.md), [s](#section), [e](mailto:a@b.c)")).toEqual([])
    expect(missing("docs/a.md", "[gone](seed.md) and [up](../../outside.md)")).toEqual([
      "links to seed.md (docs/seed.md), which the repository does not have",
      "links to ../../outside.md (../outside.md), which the repository does not have"
    ])
    expect(missing("README.md", "[core](packages/core) and [src](packages/core/src/)")).toEqual([])
    // Links in a .ts file and in a fenced block are not checked as links.
    expect(missing("x.ts", "[gone](seed.md)")).toEqual([])
    expect(missing("a.md", "```\n[gone](seed.md)\n```")).toEqual([])
  })

  it("reads section numbers from headings and from citations", () => {
    expect([
      ...sectionsOf(
        [
          "# Title",
          "## 0. At a glance",
          "## 0a. Clarifications",
          "### 0a.3 Secrets",
          "## 6. AI simulation",
          "### 6.3 Cloud adapter",
          "## 13a. Decided",
          "## B2. Metrics",
          "### Money",
          "1. a list item, not a heading"
        ].join("\n")
      )
    ]).toEqual(["0", "0a", "0a.3", "6", "6.3", "13a", "B2"])
    expect(citedSections("2", "–7, 9–11")).toEqual(["2", "7", "9", "11"])
    expect(citedSections("0a.9", "–10, §9–11")).toEqual(["0a.9", "0a.10", "9", "11"])
    expect(citedSections("8.3", " and §11")).toEqual(["8.3", "11"])
    expect(citedSections("0a.1", ", 0a.3–5")).toEqual(["0a.1", "0a.3", "0a.5"])
  })

  it("finds cited sections the cited file has no heading for", () => {
    const sections = (doc: string) =>
      doc === "docs/contract-messaging.md" ? new Set(["0a", "0a.3", "5", "5.2", "8", "8.1", "11"]) : undefined
    const missing = (text: string) => missingSections("x.ts", text, sections).map((p) => p.message)
    expect(missing("(docs/contract-messaging.md §5.2) and `docs/contract-messaging.md` §8.1, §8.5")).toEqual([
      "cites docs/contract-messaging.md §8.5, but docs/contract-messaging.md has no heading numbered 8.5"
    ])
    expect(missing("docs/contract-messaging.md §0a.3, step 2; docs/contract-messaging.md §8 and §11.")).toEqual([])
    expect(missing("docs/contract-messaging.md §5.2.")).toEqual([])
    expect(missing("docs/contract-messaging.md §9–11")).toEqual([
      "cites docs/contract-messaging.md §9, but docs/contract-messaging.md has no heading numbered 9"
    ])
    // A file that does not exist is (b)'s to report.
    expect(missing("docs/nowhere.md §1")).toEqual([])
  })
})

describe("a clone of the repository stands on its own", () => {
  const paths = tracked()
  const tree = treeOf(paths)
  const files = textFiles(paths)
  const sections = new Map(
    files.filter((file) => file.path.startsWith("docs/")).map((file) => [file.path, sectionsOf(file.text)])
  )

  it("reads the repository's tracked text files", () => {
    // The scan must see the tree, or it would pass on nothing.
    expect(files.some((file) => file.path === "docs/contract.md")).toBe(true)
    expect(files.filter((file) => file.path.startsWith("packages/core/src/")).length).toBeGreaterThan(50)
  })

  it("names no document that is outside the repository", () => {
    const names = fileNames(paths)
    expect(
      describeProblems(files.flatMap((file) => outsideMentions(file.path, file.text, tree, names))),
      "citations of documents outside the repository (file:line, and what to cite instead)"
    ).toBe("")
  })

  it("cites only docs and links to files the repository has", () => {
    expect(
      describeProblems(files.flatMap((file) => missingFiles(file.path, file.text, tree))),
      "citations and links of files the repository does not have"
    ).toBe("")
  })

  it("cites only sections the cited docs have", () => {
    expect(
      describeProblems(files.flatMap((file) => missingSections(file.path, file.text, (doc) => sections.get(doc)))),
      "citations of sections the cited file has no heading for"
    ).toBe("")
  })
})
