import { beforeAll, describe, expect, it } from "vitest"
import { type AccountFixture, makeAccount, makeUser, nextPhone } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { eventsOf } from "../eventlog/EventsResource.ts"
import type { ContractContext } from "../Slice.ts"
import type { Target } from "../TestServer.ts"
import { createLead, readLead } from "./LeadsResource.ts"

/** POSTs a file to `/api/v1/leads/imports` with the query given. */
export const postImport = (target: Target, key: string, file: string, query = "", type = "text/csv") =>
  call(target, "POST", `/api/v1/leads/imports${query === "" ? "" : `?${query}`}`, {
    auth: key,
    raw: file,
    headers: { "content-type": type }
  })

/** Polls the job until it is done (succeeded or failed), then returns it. */
export const waitForJob = async (target: Target, key: string, id: string, timeoutMs = 20_000): Promise<any> => {
  const deadline = Date.now() + timeoutMs
  while (true) {
    const reply = await call(target, "GET", `/api/v1/leads/jobs/${id}`, { auth: key })
    expect(reply.status, reply.text).toBe(200)
    if (reply.body.state === "succeeded" || reply.body.state === "failed") return reply.body
    if (Date.now() > deadline) throw new Error(`job ${id} still ${reply.body.state}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const phonesOf = async (target: Target, key: string, query = "") => {
  const reply = await call(target, "GET", `/api/v1/leads?limit=100${query}`, { auth: key })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.leads.map((lead: { phone: string }) => lead.phone).sort()
}

const JOB_KEYS = [
  "counts",
  "created_at",
  "dry_run",
  "errors",
  "errors_truncated",
  "failure",
  "finished_at",
  "id",
  "kind",
  "state",
  "total_rows",
  "updated_at"
]

/**
 * Imports, exports and bulk changes (docs/contract.md, "Imports, exports and bulk changes"): a file's rows
 * checked as single creates, upserted by phone in a job; any filtered list streamed out; one change to
 * every lead of a filtered list as a job.
 */
export const contract = (context: ContractContext) =>
  describe("imports, exports and bulk changes", () => {
    let fixture: AccountFixture
    let userId: string

    beforeAll(async () => {
      fixture = await makeAccount(context.target, { name: "Imports", keys: { reader: ["leads:read"] } })
      userId = await makeUser(context.target, fixture.accountId, "member")
    })

    it("imports a CSV by a mapping: new phones make leads, known ones are updated, bad rows are named", async () => {
      const known = await createLead(context.target, fixture.ownerKey, { name: "Known", tags: ["old"] })
      const fresh = nextPhone()
      const csv = [
        "Full Name,Mobile,E-mail,Labels,City",
        `Grace Hopper,${fresh},grace@example.com,vip;hot,Arlington`,
        "No Phone,12345,,,",
        `"Known, Renamed",${known.phone},,new-tag,`,
        `Assigned,${nextPhone()},,,`
      ].join("\n")
      const mapping = JSON.stringify({
        name: "Full Name",
        phone: "Mobile",
        email: "E-mail",
        tags: "Labels",
        "attributes.city": "City"
      })
      const reply = await postImport(context.target, fixture.ownerKey, csv, `mapping=${encodeURIComponent(mapping)}`)
      expect(reply.status, reply.text).toBe(202)
      expect(Object.keys(reply.body).sort()).toEqual(JOB_KEYS)
      expect(reply.body).toMatchObject({ kind: "import", state: "queued", dry_run: false, total_rows: 4 })
      expect(reply.body.id).toMatch(/^ljob_/)

      const job = await waitForJob(context.target, fixture.ownerKey, reply.body.id)
      expect(job.state).toBe("succeeded")
      expect(job.counts).toEqual({ read: 4, created: 2, updated: 1, unchanged: 0, failed: 1 })
      expect(job.errors).toEqual([
        {
          row: 3,
          lead_id: null,
          field: "phone",
          reason: "phone must be an international number with a leading +, e.g. +14155550100"
        }
      ])
      expect(job.finished_at).not.toBeNull()

      const found = await call(context.target, "GET", `/api/v1/leads?q=${encodeURIComponent(fresh)}`, {
        auth: fixture.ownerKey
      })
      expect(found.body.leads).toHaveLength(1)
      expect(found.body.leads[0]).toMatchObject({
        name: "Grace Hopper",
        email: "grace@example.com",
        tags: ["vip", "hot"],
        status: "new",
        attributes: { city: "Arlington" }
      })
      const renamed = await readLead(context.target, fixture.ownerKey, known.id)
      expect(renamed).toMatchObject({ name: "Known, Renamed", tags: ["new-tag"] })
      expect(renamed.updated_at > known.updated_at).toBe(true)
    })

    it("counts the leads an import makes in analytics as it counts single creates, by their status", async () => {
      // An account of its own: its analytics hold only this test's leads.
      const own = await makeAccount(context.target, { name: "Imports counted" })
      await createLead(context.target, own.ownerKey, { name: "Single", status: "won" })
      const csv = [
        "name,phone,status",
        `One,${nextPhone()},qualified`,
        `Two,${nextPhone()},qualified`,
        `Three,${nextPhone()},`,
        "Refused,12345,new"
      ].join("\n")
      const reply = await postImport(context.target, own.ownerKey, csv)
      expect(reply.status, reply.text).toBe(202)
      const job = await waitForJob(context.target, own.ownerKey, reply.body.id)
      expect(job.counts).toMatchObject({ created: 3, failed: 1 })
      // A create after the import, in the same server: still counted one by one.
      await createLead(context.target, own.ownerKey, { name: "After", status: "lost" })

      const summary = await call(context.target, "GET", "/api/v1/analytics/summary", { auth: own.ownerKey })
      expect(summary.status, summary.text).toBe(200)
      expect(summary.body.leads.created).toBe(5)
      expect(summary.body.leads.by_status).toMatchObject({ won: 1, qualified: 2, new: 1, lost: 1 })
    })

    it("imports NDJSON, skips known phones with on_conflict=skip, and a dry run writes nothing", async () => {
      const known = await createLead(context.target, fixture.ownerKey, { name: "Stays" })
      const phone = nextPhone()
      const ndjson = [
        JSON.stringify({ name: "Nd One", phone, status: "qualified", assigned_user_id: userId }),
        "",
        JSON.stringify({ name: "Renamed?", phone: known.phone }),
        "not json",
        JSON.stringify({ name: "Bad status", phone: nextPhone(), status: "maybe" })
      ].join("\n")

      const dry = await postImport(context.target, fixture.ownerKey, ndjson, "dry_run=true", "application/x-ndjson")
      expect(dry.status, dry.text).toBe(202)
      const dryJob = await waitForJob(context.target, fixture.ownerKey, dry.body.id)
      expect(dryJob).toMatchObject({ dry_run: true, state: "succeeded" })
      expect(dryJob.counts).toEqual({ read: 4, created: 1, updated: 1, unchanged: 0, failed: 2 })
      expect(await phonesOf(context.target, fixture.ownerKey)).not.toContain(phone)

      const reply = await postImport(
        context.target,
        fixture.ownerKey,
        ndjson,
        "on_conflict=skip",
        "application/x-ndjson; charset=utf-8"
      )
      expect(reply.status, reply.text).toBe(202)
      const job = await waitForJob(context.target, fixture.ownerKey, reply.body.id)
      expect(job.counts).toEqual({ read: 4, created: 1, updated: 0, unchanged: 1, failed: 2 })
      expect(job.errors.map((error: any) => [error.row, error.field])).toEqual([
        [4, null],
        [5, "status"]
      ])
      expect(await readLead(context.target, fixture.ownerKey, known.id)).toMatchObject({ name: "Stays" })
      const made = await call(context.target, "GET", `/api/v1/leads?q=${encodeURIComponent(phone)}`, {
        auth: fixture.ownerKey
      })
      expect(made.body.leads[0]).toMatchObject({ name: "Nd One", status: "qualified", assigned_user_id: userId })
    })

    it("makes a row that holds what no store keeps (NUL, a lone surrogate, deep nesting) that row's error", async () => {
      const deep = `${'{"a":'.repeat(40)}1${"}".repeat(40)}`
      const kept = nextPhone()
      const ndjson = [
        `{"name":"Lone \\ud800","phone":"${nextPhone()}"}`,
        `{"name":"Nul","phone":"${nextPhone()}","notes":"a\\u0000b"}`,
        `{"name":"Deep","phone":"${nextPhone()}","attributes":${deep}}`,
        `{"name":"Key","phone":"${nextPhone()}","\\ud800":1}`,
        JSON.stringify({ name: "Kept", phone: kept })
      ].join("\n")
      const reply = await postImport(context.target, fixture.ownerKey, ndjson, "", "application/x-ndjson")
      expect(reply.status, reply.text).toBe(202)
      const job = await waitForJob(context.target, fixture.ownerKey, reply.body.id)
      expect(job.counts).toEqual({ read: 5, created: 1, updated: 0, unchanged: 0, failed: 4 })
      expect(job.errors.map((error: any) => [error.row, error.field, error.reason])).toEqual([
        [1, null, '"name" must be well-formed Unicode (no lone surrogates)'],
        [2, null, '"notes" must not contain NUL characters'],
        [3, null, '"attributes" must not nest deeper than 32 levels'],
        [4, null, "a column's name must be well-formed Unicode (no lone surrogates)"]
      ])
      expect(await phonesOf(context.target, fixture.ownerKey)).toContain(kept)

      const csv = `name,phone,notes\nNul,${nextPhone()},"a\u0000b"\nFine,${nextPhone()},x\n`
      const fromCsv = await postImport(context.target, fixture.ownerKey, csv)
      expect(fromCsv.status, fromCsv.text).toBe(202)
      const csvJob = await waitForJob(context.target, fixture.ownerKey, fromCsv.body.id)
      expect(csvJob.counts).toEqual({ read: 2, created: 1, updated: 0, unchanged: 0, failed: 1 })
      expect(csvJob.errors).toEqual([
        { row: 2, lead_id: null, field: null, reason: '"notes" must not contain NUL characters' }
      ])
    })

    it("emits lead.created for each lead an import makes and lead.updated for each it changes, as a PATCH does", async () => {
      const owner = await makeAccount(context.target, { name: "Import events" })
      const endpoint = await call(context.target, "POST", "/api/webhooks/endpoints", {
        auth: owner.ownerKey,
        json: { url: "https://hooks.example.com/leadline", events: ["lead.created"] }
      })
      expect(endpoint.status, endpoint.text).toBe(201)
      const known = await createLead(context.target, owner.ownerKey)
      const csv = `name,phone\nOne,${nextPhone()}\nTwo,${nextPhone()}\nRenamed,${known.phone}\n`
      const reply = await postImport(context.target, owner.ownerKey, csv)
      const job = await waitForJob(context.target, owner.ownerKey, reply.body.id)
      expect(job.counts).toMatchObject({ created: 2, updated: 1 })
      const deliveries = await call(context.target, "GET", "/api/webhooks/deliveries?limit=100", {
        auth: owner.ownerKey
      })
      expect(deliveries.status, deliveries.text).toBe(200)
      const types = deliveries.body.deliveries.map((delivery: { event_type: string }) => delivery.event_type)
      // The single create's, then the import's two (the endpoint listens for lead.created only).
      expect(types).toEqual(["lead.created", "lead.created", "lead.created"])
      const updated = await eventsOf(context.target, owner.ownerKey, "?type=lead.updated")
      expect(updated.events).toHaveLength(1)
      expect(updated.events[0]!.data).toMatchObject({ id: known.id, name: "Renamed" })
      expect(updated.events[0]!.previous_attributes).toEqual({ name: known.name })
    })

    it("refuses a file it cannot use with a 400 naming the parameter, and starts nothing", async () => {
      const before = await call(context.target, "GET", "/api/v1/leads/jobs", { auth: fixture.ownerKey })
      const cases: ReadonlyArray<[string, string, string, string]> = [
        ["name,phone\nA,+14155550100", "dryrun=true", "text/csv", "dryrun"],
        ["name,phone\nA,+14155550100", "dry_run=yes", "text/csv", "dry_run"],
        ["name,phone\nA,+14155550100", "on_conflict=merge", "text/csv", "on_conflict"],
        ["name,phone\nA,+14155550100", "mapping=notjson", "text/csv", "mapping"],
        [
          "name,phone\nA,+14155550100",
          `mapping=${encodeURIComponent('{"nickname":"x"}')}`,
          "text/csv",
          "mapping.nickname"
        ],
        ["Name,Mobile\nA,+14155550100", "", "text/csv", "mapping.name"],
        [
          "name,phone\nA,+14155550100",
          `mapping=${encodeURIComponent('{"email":"Mail"}')}`,
          "text/csv",
          "mapping.email"
        ],
        ['name,phone\n"A,+14155550100', "", "text/csv", "body"],
        ["name,name\nA,B", "", "text/csv", "body"],
        // A mapping is stored with its job: a field no store keeps is refused, not a 500.
        [
          "name,phone\nA,+14155550100",
          `mapping=${encodeURIComponent('{"attributes.\\u0000":"name"}')}`,
          "text/csv",
          "mapping.attributes.\u0000"
        ],
        ["name,phone\n", "", "text/csv", "body"],
        ["", "", "application/x-ndjson", "body"]
      ]
      for (const [file, query, type, path] of cases) {
        const reply = await postImport(context.target, fixture.ownerKey, file, query, type)
        expect(reply.status, `${query} ${file}: ${reply.text}`).toBe(400)
        expect(reply.body.code).toBe("validation_error")
        expect(reply.body.details.map((detail: { path: string }) => detail.path)).toContain(path)
      }
      const json = await call(context.target, "POST", "/api/v1/leads/imports", {
        auth: fixture.ownerKey,
        json: { name: "A", phone: "+14155550100" }
      })
      expect(json.status).toBe(415)
      expect(json.body).toEqual({
        error: "The request body must be text/csv or application/x-ndjson",
        code: "unsupported_media_type"
      })
      const after = await call(context.target, "GET", "/api/v1/leads/jobs", { auth: fixture.ownerKey })
      expect(after.body.meta.total).toBe(before.body.meta.total)
    })

    it("needs leads:write to import and leads:read to follow the job", async () => {
      const reader = fixture.keys.reader!.apiKey
      const refused = await postImport(context.target, reader, `name,phone\nA,${nextPhone()}`)
      expect(refused.status).toBe(403)
      expect(refused.body).toEqual({ error: "Insufficient scope: requires leads:write", code: "forbidden" })
      const reply = await postImport(context.target, fixture.ownerKey, `name,phone\nA,${nextPhone()}`)
      const job = await waitForJob(context.target, reader, reply.body.id)
      expect(job.counts.created).toBe(1)
      const listed = await call(context.target, "GET", "/api/v1/leads/jobs?kind=import&limit=1", { auth: reader })
      expect(listed.status).toBe(200)
      expect(listed.body.jobs[0].id).toBe(reply.body.id)
      expect(listed.body.meta).toMatchObject({ limit: 1, offset: 0, has_more: true })
      const elsewhere = await call(context.target, "GET", `/api/v1/leads/jobs/${reply.body.id}`, {
        auth: context.other.ownerKey
      })
      expect(elsewhere.status).toBe(404)
    })

    it("exports a filtered list as CSV that an import reads back, and as NDJSON", async () => {
      const owner = await makeAccount(context.target, { name: "Exports" })
      const tagged = []
      for (let i = 0; i < 3; i++) {
        tagged.push(
          await createLead(context.target, owner.ownerKey, {
            name: `Quote "${i}", comma`,
            tags: ["export", "x"],
            attributes: { n: i }
          })
        )
      }
      await createLead(context.target, owner.ownerKey, { name: "Left out", tags: ["other"] })
      const csv = await call(context.target, "GET", "/api/v1/leads/export?tag=export&sort=created_at", {
        auth: owner.ownerKey
      })
      expect(csv.status, csv.text).toBe(200)
      expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8")
      const lines = csv.text.trimEnd().split("\n")
      expect(lines[0]).toBe(
        "id,name,phone,email,tags,status,assigned_user_id,attributes,marketing_opt_out,created_at,updated_at"
      )
      expect(lines).toHaveLength(4)
      expect(lines[1]).toBe(
        `${tagged[0]!.id},"Quote ""0"", comma",${tagged[0]!.phone},,export;x,new,,"{""n"":0}",,${tagged[0]!.created_at},${tagged[0]!.updated_at}`
      )

      const ndjson = await call(context.target, "GET", "/api/v1/leads/export?tag=export&format=ndjson", {
        auth: owner.ownerKey
      })
      expect(ndjson.status).toBe(200)
      expect(ndjson.headers.get("content-type")).toBe("application/x-ndjson")
      const leads = ndjson.text
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line))
      expect(leads.map((lead) => lead.id)).toEqual(tagged.map((lead) => lead.id).reverse())

      // The export is a file an import takes back: the same leads, unchanged.
      const back = await postImport(context.target, owner.ownerKey, csv.text)
      const job = await waitForJob(context.target, owner.ownerKey, back.body.id)
      expect(job.counts).toEqual({ read: 3, created: 0, updated: 0, unchanged: 3, failed: 0 })

      const bad = await call(context.target, "GET", "/api/v1/leads/export?format=xml&stauts=new", {
        auth: owner.ownerKey
      })
      expect(bad.status).toBe(400)
      expect(bad.body.details.map((detail: { path: string }) => detail.path).sort()).toEqual(["format", "stauts"])
    })

    it("changes every lead of a filtered list in a bulk job: tags added and removed, assignment", async () => {
      const owner = await makeAccount(context.target, { name: "Bulk" })
      const member = await makeUser(context.target, owner.accountId, "member")
      const hot = []
      for (let i = 0; i < 3; i++) hot.push(await createLead(context.target, owner.ownerKey, { tags: ["hot", "b"] }))
      const cold = await createLead(context.target, owner.ownerKey, { tags: ["cold"] })
      const reply = await call(context.target, "POST", "/api/v1/leads/bulk", {
        auth: owner.ownerKey,
        json: { filter: { tag: ["hot"] }, add_tags: ["called"], remove_tags: ["b"], assigned_user_id: member }
      })
      expect(reply.status, reply.text).toBe(202)
      expect(reply.body).toMatchObject({ kind: "bulk", state: "queued", total_rows: null })
      const job = await waitForJob(context.target, owner.ownerKey, reply.body.id)
      expect(job.counts).toEqual({ read: 3, created: 0, updated: 3, unchanged: 0, failed: 0 })
      for (const lead of hot) {
        const now = await readLead(context.target, owner.ownerKey, lead.id)
        expect(now).toMatchObject({ tags: ["hot", "called"], assigned_user_id: member })
        expect(now.updated_at > lead.updated_at).toBe(true)
      }
      expect(await readLead(context.target, owner.ownerKey, cold.id)).toEqual(
        await readLead(context.target, owner.ownerKey, cold.id)
      )
      expect((await readLead(context.target, owner.ownerKey, cold.id)).tags).toEqual(["cold"])
      // Each change is the lead's lead.updated, with what it was.
      const changes = await eventsOf(context.target, owner.ownerKey, "?type=lead.updated")
      expect(changes.events.map((event) => event.data.id).sort()).toEqual(hot.map((lead) => lead.id).sort())
      for (const event of changes.events) {
        expect(event.previous_attributes).toEqual({ tags: ["hot", "b"], assigned_user_id: null })
      }

      // Again: every lead has these values already.
      const again = await call(context.target, "POST", "/api/v1/leads/bulk", {
        auth: owner.ownerKey,
        json: { filter: { tag: ["hot"] }, add_tags: ["called"], assigned_user_id: member }
      })
      const second = await waitForJob(context.target, owner.ownerKey, again.body.id)
      expect(second.counts).toEqual({ read: 3, created: 0, updated: 0, unchanged: 3, failed: 0 })
    })

    it("refuses a bulk change it cannot make with a 400 naming the field, and starts nothing", async () => {
      const cases: ReadonlyArray<[unknown, string]> = [
        [{ filter: {} }, "add_tags"],
        [{ filter: { stauts: "new" }, add_tags: ["x"] }, "filter.stauts"],
        [{ filter: { status: "maybe" }, add_tags: ["x"] }, "filter.status"],
        [{ filter: {}, add_tags: [""] }, "add_tags.0"],
        [{ filter: {}, add_tags: ["x"], remove_tags: ["x"] }, "remove_tags"],
        [{ filter: {}, assigned_user_id: "00000000-0000-4000-8000-000000000000" }, "assigned_user_id"],
        [{ add_tags: ["x"] }, "filter"],
        [{ filter: {}, add_tags: ["x"], colour: "red" }, "colour"]
      ]
      for (const [json, path] of cases) {
        const reply = await call(context.target, "POST", "/api/v1/leads/bulk", { auth: fixture.ownerKey, json })
        expect(reply.status, `${JSON.stringify(json)}: ${reply.text}`).toBe(400)
        expect(reply.body.details.map((detail: { path: string }) => detail.path)).toContain(path)
      }
      const reader = await call(context.target, "POST", "/api/v1/leads/bulk", {
        auth: fixture.keys.reader!.apiKey,
        json: { filter: {}, add_tags: ["x"] }
      })
      expect(reader.status).toBe(403)
    })
  })
