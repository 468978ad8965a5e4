import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAccount } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import { until } from "../src/internal/wire.ts"
import { PATH } from "../src/knowledge/KnowledgeResource.ts"
import * as TestServer from "../src/TestServer.ts"
import * as Wirings from "../src/Wirings.ts"

/** A loopback site whose pages the tests script: path → status, type and body. */
const site = async () => {
  const pages = new Map<string, { status?: number; type?: string; body?: string | Buffer; location?: string }>()
  const server: Server = createServer((request, response) => {
    const page = pages.get(request.url ?? "/") ?? { status: 404, type: "text/plain", body: "not found" }
    response.writeHead(page.status ?? 200, {
      ...(page.type === undefined ? {} : { "content-type": page.type }),
      ...(page.location === undefined ? {} : { location: page.location })
    })
    response.end(page.body ?? "")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    base,
    pages,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/**
 * `url` knowledge sources (docs/contract-commerce-ai.md §4) against a page server on loopback (the servers
 * here allow private URLs, as a development setup does): fetched after the upload, converted,
 * chunked, `ready` with `knowledge.updated`; too big, too many redirects or the wrong type → `failed`.
 */
for (const [name, wiring] of Wirings.wirings) {
  describe(`url knowledge sources ${name}`, () => {
    const stage = Wirings.stage(wiring)
    const owner = () => stage.account.ownerKey
    let pages: Awaited<ReturnType<typeof site>>
    beforeAll(async () => {
      pages = await site()
    })
    afterAll(() => pages?.close())

    const upload = async (url: string) => {
      const reply = await call(stage.server, "POST", PATH, { auth: owner(), json: { kind: "url", url } })
      expect(reply.status, reply.text).toBe(201)
      return reply.body as Record<string, any> & { id: string }
    }
    const settled = (id: string) =>
      until(
        async () => (await call(stage.server, "GET", `${PATH}/${id}`, { auth: owner() })).body,
        (source) => source.status !== "processing",
        10_000
      )

    it("fetches an HTML page after the upload, as text, searchable, with knowledge.updated from processing to ready", async () => {
      const endpoint = stage.receiver.endpoint(`/knowledge-urls-${name.replace(" ", "-")}`)
      const registered = await call(stage.server, "POST", "/api/webhooks/endpoints", {
        auth: owner(),
        json: { url: endpoint.url, events: ["knowledge.updated"] }
      })
      endpoint.setSecret(registered.body.secret)
      pages.pages.set("/shipping", {
        type: "text/html; charset=utf-8",
        body: "<html><head><style>p{}</style><script>var x=1</script></head><body><nav>Home | Shop</nav><h1>Shipping</h1><p>We ship to <a href='/x'>Recife</a> within 3 days.</p></body></html>"
      })
      const created = await upload(`${pages.base}/shipping`)
      expect(created).toMatchObject({
        kind: "url",
        url: `${pages.base}/shipping`,
        title: `${pages.base}/shipping`,
        status: "processing",
        chunk_count: 0
      })
      const ready = await settled(created.id)
      expect(ready).toMatchObject({ status: "ready", error: null })
      expect(ready.content).toContain("We ship to Recife within 3 days.")
      expect(ready.content).not.toMatch(/<|var x|p\{\}|Home \| Shop/)
      const found = await call(stage.server, "GET", `/api/v1/knowledge/search?q=Recife&source_ids=${created.id}`, {
        auth: owner()
      })
      expect(found.body.results.map((r: { source_id: string }) => r.source_id)).toEqual([created.id])
      const events = (await endpoint.waitFor(2, 10_000)).map((request) => JSON.parse(request.body))
      expect(events.map((event) => [event.data.status, event.previous_attributes?.status])).toEqual([
        ["processing", undefined],
        ["ready", "processing"]
      ])
    })

    it("reads markdown by its headings, follows up to 3 redirects, and fetches again on refresh", async () => {
      pages.pages.set("/faq.md", {
        type: "text/markdown",
        body: "# Hours\n\nOpen from 7 am.\n\n# Parking\n\nSix spaces."
      })
      pages.pages.set("/r1", { status: 301, location: "/r2" })
      pages.pages.set("/r2", { status: 302, location: `${pages.base}/r3` })
      pages.pages.set("/r3", { status: 307, location: "/faq.md" })
      const created = await upload(`${pages.base}/r1`)
      await settled(created.id)
      const chunks = await call(stage.server, "GET", `${PATH}/${created.id}/chunks`, { auth: owner() })
      expect(chunks.body.chunks.map((c: { heading: string }) => c.heading)).toEqual(["Hours", "Parking"])
      pages.pages.set("/faq.md", { type: "text/markdown", body: "# Hours\n\nOpen from 6 am." })
      const refreshed = await call(stage.server, "POST", `${PATH}/${created.id}/refresh`, { auth: owner() })
      expect([refreshed.status, refreshed.body.status], refreshed.text).toEqual([202, "processing"])
      expect((await settled(created.id)).content).toBe("# Hours\n\nOpen from 6 am.")
    })

    it("fails a page over 2 MiB, a fourth redirect and a type it cannot read, saying why", async () => {
      pages.pages.set("/big", { type: "text/plain", body: Buffer.alloc(3 * 1024 * 1024, "a") })
      pages.pages.set("/loop1", { status: 302, location: "/loop2" })
      pages.pages.set("/loop2", { status: 302, location: "/loop3" })
      pages.pages.set("/loop3", { status: 302, location: "/loop4" })
      pages.pages.set("/loop4", { status: 302, location: "/loop1" })
      pages.pages.set("/doc.pdf", { type: "application/pdf", body: "%PDF-1.7" })
      const cases = [
        ["/big", "the page is larger than 2 MiB"],
        ["/loop1", "more than 3 redirects"],
        ["/doc.pdf", "unsupported content type application/pdf: HTML, plain text or markdown only"],
        ["/missing", "HTTP 404"]
      ] as const
      for (const [path, error] of cases) {
        const created = await upload(`${pages.base}${path}`)
        expect(await settled(created.id), path).toMatchObject({ status: "failed", error, chunk_count: 0 })
      }
      const again = await call(stage.server, "POST", PATH, {
        auth: owner(),
        json: { kind: "url", url: `${pages.base}/big` }
      })
      expect([again.status, again.body]).toEqual([
        409,
        { error: `A knowledge source of ${pages.base}/big already exists`, code: "conflict" }
      ])
      const text = await call(stage.server, "POST", PATH, {
        auth: owner(),
        json: { kind: "text", title: "Plain", content: "Plain text." }
      })
      const refresh = await call(stage.server, "POST", `${PATH}/${text.body.id}/refresh`, { auth: owner() })
      expect([refresh.status, refresh.body]).toEqual([
        409,
        { error: "Only url sources can be refreshed", code: "conflict" }
      ])
    })
  })
}

describe("url knowledge sources where private addresses are refused", () => {
  let server: TestServer.Running
  let key: string
  beforeAll(async () => {
    // A public-looking name that resolves to loopback: refused at connect, whatever the URL says.
    server = await TestServer.start({
      webhooks: { resolver: { lookup: async () => [{ address: "127.0.0.1", family: 4 }] } }
    })
    key = (await makeAccount(server)).ownerKey
  })
  afterAll(() => server?.close())

  it("refuses http, loopback and private hosts at upload, and a name that resolves to one at connect", async () => {
    for (const url of [
      "http://example.com/help",
      "https://127.0.0.1/help",
      "https://10.0.0.8/help",
      "https://localhost/help",
      "https://[::1]/help"
    ]) {
      const reply = await call(server, "POST", PATH, { auth: key, json: { kind: "url", url } })
      expect([reply.status, reply.body.details?.[0]?.path], `${url}: ${reply.text}`).toEqual([400, "url"])
    }
    const rebinding = await call(server, "POST", PATH, {
      auth: key,
      json: { kind: "url", url: "https://help.example.com/faq" }
    })
    expect(rebinding.status, rebinding.text).toBe(201)
    const settled = await until(
      async () => (await call(server, "GET", `${PATH}/${rebinding.body.id}`, { auth: key })).body,
      (source) => source.status !== "processing",
      10_000
    )
    expect(settled).toMatchObject({
      status: "failed",
      error: "refused: the host resolves to a private or internal address"
    })
  })
})
