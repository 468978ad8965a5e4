import { createHash } from "node:crypto"
import { beforeAll, describe, expect, it } from "vitest"
import { makeKey } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { forbidden, notFound } from "../internal/wire.ts"
import type { ContractContext } from "../Slice.ts"
import { createSource, PATH, readSource, SOURCE_KEYS } from "./KnowledgeResource.ts"

const SEARCH = "/api/v1/knowledge/search"

const POLICY = `# Shipping policy

Our store ships orders within 2 business days. Couriers deliver in São Paulo the next morning.

## Fees

Delivery is free above R$ 100; below that it costs R$ 12.

# Returns

Unopened items can be returned within 7 days for a full refund.`

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")

/** The knowledge base (docs/contract-commerce-ai.md §4): upload, chunks, search, change, delete. */
export const contract = (context: ContractContext) => {
  describe("knowledge", () => {
    const owner = () => context.acme.ownerKey
    const search = (query: string, key = owner()) => call(context.target, "GET", `${SEARCH}?${query}`, { auth: key })
    let reader: string
    beforeAll(async () => {
      reader = (await makeKey(context.target, context.acme.accountId, { scopes: ["knowledge:read"] })).apiKey
    })

    it("uploads markdown ready and chunked at once, with its content's hash; a GET adds the content", async () => {
      const reply = await call(context.target, "POST", PATH, {
        auth: owner(),
        json: { kind: "markdown", title: "Shipping policy", content: POLICY }
      })
      expect(reply.status, reply.text).toBe(201)
      expect(Object.keys(reply.body).sort()).toEqual(SOURCE_KEYS)
      expect(reply.body).toMatchObject({
        kind: "markdown",
        title: "Shipping policy",
        url: null,
        language: "english",
        status: "ready",
        error: null,
        char_count: POLICY.length,
        content_sha256: sha256(POLICY),
        embedding_status: "none"
      })
      expect(reply.body.id).toMatch(/^ks_[0-9a-z]{26}$/)
      const read = await readSource(context.target, reader, reply.body.id)
      expect(read).toEqual({ ...reply.body, content: POLICY })
      const chunks = await call(context.target, "GET", `${PATH}/${reply.body.id}/chunks`, { auth: reader })
      expect(chunks.status, chunks.text).toBe(200)
      expect(chunks.body.meta.total).toBe(reply.body.chunk_count)
      // Each section is a chunk of its own, prefixed with its heading path.
      expect(chunks.body.chunks.map((c: any) => [c.position, c.heading, c.source_id])).toEqual([
        [0, "Shipping policy", reply.body.id],
        [1, "Shipping policy > Fees", reply.body.id],
        [2, "Returns", reply.body.id]
      ])
      expect(chunks.body.chunks[1].text).toBe(
        "Section: Shipping policy > Fees\n\nDelivery is free above R$ 100; below that it costs R$ 12."
      )
    })

    it("refuses an empty title, too long a content, a bad url, an unknown language and an unknown field, writing nothing", async () => {
      const before = await call(context.target, "GET", `${PATH}?limit=1`, { auth: owner() })
      const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
        [{ kind: "text", title: "", content: "x" }, "title"],
        [{ kind: "text", title: "Big", content: "x".repeat(200_001) }, "content"],
        [{ kind: "text", title: "Blank", content: "   \n  " }, "content"],
        [{ kind: "url", title: "Site" }, "url"],
        [{ kind: "url", url: "ftp://example.com/help" }, "url"],
        [{ kind: "url", url: "https://user:secret@example.com/help" }, "url"],
        [{ kind: "text", title: "Klingon", content: "x", language: "klingon" }, "language"],
        [{ kind: "text", title: "Extra", content: "x", colour: "red" }, "colour"]
      ]
      for (const [json, path] of cases) {
        const reply = await call(context.target, "POST", PATH, { auth: owner(), json })
        expect([reply.status, reply.body.code], reply.text).toEqual([400, "validation_error"])
        expect(reply.body.details.map((d: { path: string }) => d.path)).toContain(path)
      }
      const after = await call(context.target, "GET", `${PATH}?limit=1`, { auth: owner() })
      expect(after.body.meta.total).toBe(before.body.meta.total)
    })

    it("finds the passage for a natural question, the passages with every term first", async () => {
      const source = await createSource(context.target, owner(), { title: "Delivery", content: POLICY })
      const reply = await search(
        `q=${encodeURIComponent("how long does shipping take")}&source_ids=${source.id}`,
        reader
      )
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.query).toBe("how long does shipping take")
      expect(reply.body.mode).toBe("fts")
      const [best] = reply.body.results
      expect(best).toMatchObject({ source_id: source.id, source_title: "Delivery", position: 0, match: "some_terms" })
      expect(best.snippet).toContain("<b>")
      const both = await search(`q=${encodeURIComponent("delivery fees")}&source_ids=${source.id}`)
      // "deliver" and "delivery" stem apart: only the Fees section has both words.
      expect(both.body.results.map((r: any) => [r.position, r.match])).toEqual([[1, "all_terms"]])
      const scores = reply.body.results.map((r: { score: number }) => r.score)
      expect([...scores].sort((a, b) => b - a)).toEqual(scores)
      // A query of no known word finds nothing rather than everything.
      const none = await search(`q=zzyzx&source_ids=${source.id}`)
      expect([none.status, none.body.results]).toEqual([200, []])
      // The question is words, never query syntax: operators, quotes, backslashes and paths are searched for.
      const odd = [`it's O'Neil's`, "C:\\Windows\\x.txt /usr/local/x", "a & b | !c <-> (d)", "'''", "\\", "the a of"]
      for (const question of odd) {
        const reply = await search(`q=${encodeURIComponent(question)}&source_ids=${source.id}`)
        expect([reply.status, reply.body.query], reply.text).toEqual([200, question])
      }
    })

    it("refuses an empty query, a limit past 20 and hybrid search while embeddings are off", async () => {
      for (const [query, path] of [
        ["q=", "q"],
        ["q=ship&limit=21", "limit"],
        ["q=ship&limit=0", "limit"],
        ["q=ship&mode=hybrid", "mode"]
      ] as const) {
        const reply = await search(query)
        expect([reply.status, reply.body.code], `${query}: ${reply.text}`).toEqual([400, "validation_error"])
        expect(reply.body.details.map((d: { path: string }) => d.path)).toContain(path)
      }
    })

    it("re-chunks changed content and keeps a PATCH that changes nothing as it was", async () => {
      const source = await createSource(context.target, owner(), { kind: "text", content: "Pickup only." })
      const same = await call(context.target, "PATCH", `${PATH}/${source.id}`, {
        auth: owner(),
        json: { title: source.title, content: "Pickup only." }
      })
      expect([same.status, same.body]).toEqual([200, source])
      const changed = await call(context.target, "PATCH", `${PATH}/${source.id}`, {
        auth: owner(),
        json: { content: "We now deliver to Campinas on Saturdays." }
      })
      expect(changed.status, changed.text).toBe(200)
      expect(changed.body).toMatchObject({
        title: source.title,
        char_count: 40,
        content_sha256: sha256("We now deliver to Campinas on Saturdays.")
      })
      const found = await search(`q=Campinas&source_ids=${source.id}`)
      expect(found.body.results.map((r: any) => r.text)).toEqual(["We now deliver to Campinas on Saturdays."])
      const gone = await search(`q=pickup&source_ids=${source.id}`)
      expect(gone.body.results).toEqual([])
    })

    it("deletes a source with its chunks: a GET is 404 and search no longer finds it", async () => {
      const source = await createSource(context.target, owner(), { kind: "text", content: "Our kiosk opens at 7 am." })
      expect((await search(`q=kiosk&source_ids=${source.id}`)).body.results).toHaveLength(1)
      const removed = await call(context.target, "DELETE", `${PATH}/${source.id}`, { auth: owner() })
      expect([removed.status, removed.body]).toEqual([200, { id: source.id, deleted: true }])
      const read = await call(context.target, "GET", `${PATH}/${source.id}`, { auth: owner() })
      expect([read.status, read.body]).toEqual([404, notFound("knowledge source", source.id)])
      const chunks = await call(context.target, "GET", `${PATH}/${source.id}/chunks`, { auth: owner() })
      expect(chunks.status).toBe(404)
      expect((await search("q=kiosk")).body.results.filter((r: any) => r.source_id === source.id)).toEqual([])
    })

    it("lets knowledge:read read and search but not write; another account's source is 404", async () => {
      const source = await createSource(context.target, owner())
      const create = await call(context.target, "POST", PATH, {
        auth: reader,
        json: { kind: "text", title: "x", content: "y" }
      })
      expect([create.status, create.body]).toEqual([403, forbidden("knowledge:write")])
      const remove = await call(context.target, "DELETE", `${PATH}/${source.id}`, { auth: reader })
      expect([remove.status, remove.body]).toEqual([403, forbidden("knowledge:write")])
      const elsewhere = await call(context.target, "GET", `${PATH}/${source.id}`, { auth: context.other.ownerKey })
      expect([elsewhere.status, elsewhere.body]).toEqual([404, notFound("knowledge source", source.id)])
      const theirs = await call(context.target, "GET", `${SEARCH}?q=delivery`, { auth: context.other.ownerKey })
      expect(theirs.body.results.filter((r: any) => r.source_id === source.id)).toEqual([])
    })
  })
}
