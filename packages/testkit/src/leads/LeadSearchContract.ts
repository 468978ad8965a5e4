import { beforeAll, describe, expect, it } from "vitest"
import { type AccountFixture, makeAccount, makeUser } from "../Fixtures.ts"
import { call } from "../Http.ts"
import type { ContractContext } from "../Slice.ts"
import { postLead, unknownLeadId } from "./LeadsResource.ts"

interface Listed {
  readonly status: number
  readonly ids: ReadonlyArray<string>
  readonly meta: Record<string, unknown>
  readonly body: any
}

/**
 * Finding leads (docs/contract.md, "Finding leads"): `q`, the filters, `sort`, and pages by cursor,
 * on five leads whose names, emails, phones, statuses, tags and times tell them apart.
 */
export const contract = (context: ContractContext) =>
  describe("finding leads", () => {
    let fixture: AccountFixture
    let other: AccountFixture
    let userId: string
    const lead: Record<"ada" | "adam" | "bob" | "zed" | "eve", { id: string; created_at: string; updated_at: string }> =
      {} as never
    let zedUpdatedAt: string

    beforeAll(async () => {
      fixture = await makeAccount(context.target, { name: "Finding" })
      other = await makeAccount(context.target, { name: "Elsewhere" })
      userId = await makeUser(context.target, fixture.accountId, "member")
      const make = async (body: Record<string, unknown>) => {
        const reply = await postLead(context.target, fixture.ownerKey, body)
        expect(reply.status, reply.text).toBe(201)
        // Times a millisecond apart at least: created_after and created_before compare them.
        await new Promise((resolve) => setTimeout(resolve, 3))
        return reply.body
      }
      lead.ada = await make({
        name: "Ada Lovelace",
        phone: "+14155550101",
        email: "ada@example.com",
        status: "new",
        tags: ["vip"],
        assigned_user_id: userId
      })
      lead.adam = await make({ name: "adam smith", phone: "+14155550202", status: "contacted", tags: ["hot"] })
      lead.bob = await make({
        name: "Bob Stone",
        phone: "+442071838750",
        email: "Adaline@Example.org",
        status: "won",
        tags: ["vip", "hot"]
      })
      lead.zed = await make({ name: "Zed", phone: "+14155550303", email: "z@x.io", status: "lost" })
      lead.eve = await make({ name: "eve O'Hara", phone: "+33142685300", status: "new", tags: ["cold"] })
      const patched = await call(context.target, "PATCH", `/api/v1/leads/${lead.zed.id}`, {
        auth: fixture.ownerKey,
        json: { tags: ["patched"] }
      })
      expect(patched.status, patched.text).toBe(200)
      zedUpdatedAt = patched.body.updated_at
      const elsewhere = await postLead(context.target, other.ownerKey, { name: "Ada Elsewhere", phone: "+14155550909" })
      expect(elsewhere.status).toBe(201)
    })

    const list = async (query: string, key = fixture.ownerKey): Promise<Listed> => {
      const reply = await call(context.target, "GET", `/api/v1/leads?${query}`, { auth: key })
      return {
        status: reply.status,
        ids: reply.status === 200 ? reply.body.leads.map((found: { id: string }) => found.id) : [],
        meta: reply.body?.meta,
        body: reply.body
      }
    }
    const ids = (...names: ReadonlyArray<keyof typeof lead>) => names.map((name) => lead[name].id)

    it.each([
      ["q=ada", ["bob", "adam", "ada"]],
      ["q=ADA", ["bob", "adam", "ada"]],
      ["q=adal", ["bob"]],
      ["q=ada%20l", ["ada"]],
      ["q=%2B1%20(415)%20555-02", ["adam"]],
      ["q=1415555", ["zed", "adam", "ada"]],
      ["q=44%2020%207183", ["bob"]],
      ["q=a%25", []],
      ["q=_", []],
      ["q=eve%20o'", ["eve"]]
    ] as const)("searches names, emails and phones by prefix: %s", async (query, expected) => {
      const found = await list(query)
      expect(found.status, JSON.stringify(found.body)).toBe(200)
      expect(found.ids).toEqual(ids(...expected))
      expect(found.meta).toMatchObject({ total: null, has_more: false, offset: 0, next_offset: null })
    })

    it.each([
      ["status=new", ["eve", "ada"]],
      ["status=new,won", ["eve", "bob", "ada"]],
      ["tag=vip", ["bob", "ada"]],
      ["tag=vip&tag=cold", ["eve", "bob", "ada"]],
      ["q=ada&status=new", ["ada"]],
      ["q=ada&tag=hot", ["bob", "adam"]],
      ["assigned_user_id=none", ["eve", "zed", "bob", "adam"]]
    ] as const)("filters, all conditions at once: %s", async (query, expected) => {
      const found = await list(query)
      expect(found.status, JSON.stringify(found.body)).toBe(200)
      expect(found.ids).toEqual(ids(...expected))
    })

    it("filters by assignee and by the times of creation and change", async () => {
      expect((await list(`assigned_user_id=${userId}`)).ids).toEqual(ids("ada"))
      expect((await list(`assigned_user_id=${userId.toUpperCase()}`)).ids).toEqual(ids("ada"))
      const at = encodeURIComponent(lead.bob.created_at)
      expect((await list(`created_after=${at}`)).ids).toEqual(ids("eve", "zed", "bob"))
      expect((await list(`created_before=${at}`)).ids).toEqual(ids("adam", "ada"))
      expect(
        (await list(`created_after=${encodeURIComponent(lead.adam.created_at)}&created_before=${at}`)).ids
      ).toEqual(ids("adam"))
      expect((await list(`updated_after=${encodeURIComponent(zedUpdatedAt)}`)).ids).toEqual(ids("zed"))
      // The same instant in another offset.
      const plusTwo = new Date(Date.parse(lead.bob.created_at) + 2 * 3_600_000).toISOString().replace("Z", "+02:00")
      expect((await list(`created_after=${encodeURIComponent(plusTwo)}`)).ids).toEqual(ids("eve", "zed", "bob"))
    })

    it.each([
      ["sort=name", ["ada", "adam", "bob", "eve", "zed"]],
      ["sort=-name", ["zed", "eve", "bob", "adam", "ada"]],
      ["sort=created_at", ["ada", "adam", "bob", "zed", "eve"]],
      ["sort=-created_at", ["eve", "zed", "bob", "adam", "ada"]],
      ["sort=-updated_at", ["zed", "eve", "bob", "adam", "ada"]],
      ["sort=updated_at&status=new,lost", ["ada", "eve", "zed"]]
    ] as const)("sorts: %s", async (query, expected) => {
      const found = await list(query)
      expect(found.status, JSON.stringify(found.body)).toBe(200)
      expect(found.ids).toEqual(ids(...expected))
    })

    it("counts an unfiltered list in any order, and leaves a filtered one uncounted", async () => {
      expect((await list("sort=name")).meta.total).toBe(5)
      expect((await list("status=new")).meta.total).toBeNull()
    })

    it("pages by cursor both ways, with the cursors either side of each page", async () => {
      const first = await list("sort=name&limit=2")
      expect(first.ids).toEqual(ids("ada", "adam"))
      expect(first.meta).toEqual({
        limit: 2,
        offset: 0,
        total: 5,
        has_more: true,
        next_offset: 2,
        next_starting_after: lead.adam.id,
        previous_ending_before: null
      })
      const second = await list(`sort=name&limit=2&starting_after=${lead.adam.id}`)
      expect(second.ids).toEqual(ids("bob", "eve"))
      expect(second.meta).toEqual({
        limit: 2,
        offset: null,
        total: 5,
        has_more: true,
        next_offset: null,
        next_starting_after: lead.eve.id,
        previous_ending_before: lead.bob.id
      })
      const last = await list(`sort=name&limit=2&starting_after=${lead.eve.id}`)
      expect(last.ids).toEqual(ids("zed"))
      expect(last.meta).toMatchObject({
        has_more: false,
        next_starting_after: null,
        previous_ending_before: lead.zed.id
      })

      const back = await list(`sort=name&limit=2&ending_before=${lead.zed.id}`)
      expect(back.ids).toEqual(ids("bob", "eve"))
      expect(back.meta).toMatchObject({
        has_more: true,
        next_starting_after: lead.eve.id,
        previous_ending_before: lead.bob.id
      })
      const start = await list(`sort=name&limit=2&ending_before=${lead.bob.id}`)
      expect(start.ids).toEqual(ids("ada", "adam"))
      expect(start.meta).toMatchObject({
        has_more: false,
        previous_ending_before: null,
        next_starting_after: lead.adam.id
      })
    })

    it("visits every match once by walking next_starting_after, filtered and in the default order", async () => {
      const seen: Array<string> = []
      let cursor: string | null = null
      for (let guard = 0; guard < 10; guard++) {
        const page = await list(`status=new,won,lost&limit=1${cursor === null ? "" : `&starting_after=${cursor}`}`)
        expect(page.status).toBe(200)
        seen.push(...page.ids)
        cursor = page.meta.next_starting_after as string | null
        if (cursor === null) break
      }
      expect(seen).toEqual(ids("eve", "zed", "bob", "ada"))
    })

    it("never finds another account's leads, nor pages from them", async () => {
      expect((await list("q=ada%20e")).ids).toEqual([])
      const theirs = await list("q=ada", other.ownerKey)
      expect(theirs.ids).toHaveLength(1)
      const fromTheirs = await list(`starting_after=${theirs.ids[0]}`)
      expect(fromTheirs.status).toBe(400)
      expect(fromTheirs.body.details).toEqual([{ path: "starting_after", message: "no such lead in this account" }])
    })

    it.each([
      ["stauts=new", "stauts"],
      ["status=bogus", "status"],
      ["status=new,", "status"],
      ["tag=", "tag"],
      ["assigned_user_id=abc", "assigned_user_id"],
      ["created_after=yesterday", "created_after"],
      ["created_before=2026-13-01T00:00:00Z", "created_before"],
      ["updated_after=2026-01-01", "updated_after"],
      ["sort=age", "sort"],
      ["starting_after=xyz", "starting_after"],
      ["ending_before=ld_", "ending_before"],
      [`q=${"a".repeat(201)}`, "q"],
      ["q=", "q"]
    ])("refuses %s with a 400 naming the parameter", async (query, parameter) => {
      const found = await list(query)
      expect(found.status, JSON.stringify(found.body)).toBe(400)
      expect(found.body.code).toBe("validation_error")
      // A repeated parameter's detail names its position too (`tag.0`).
      const paths: Array<string> = found.body.details.map((detail: { path: string }) => detail.path)
      expect(
        paths.some((path) => path === parameter || path.startsWith(`${parameter}.`)),
        paths.join()
      ).toBe(true)
    })

    it("refuses a cursor that names no lead, an offset with a cursor, and both cursors", async () => {
      const unknown = await list(`starting_after=${unknownLeadId()}`)
      expect(unknown.status).toBe(400)
      expect(unknown.body.details).toEqual([{ path: "starting_after", message: "no such lead in this account" }])
      const both = await list(`offset=2&starting_after=${lead.ada.id}`)
      expect(both.status).toBe(400)
      expect(both.body.details.map((detail: { path: string }) => detail.path)).toEqual(["offset"])
      const twoCursors = await list(`starting_after=${lead.ada.id}&ending_before=${lead.bob.id}`)
      expect(twoCursors.status).toBe(400)
      expect(twoCursors.body.details.map((detail: { path: string }) => detail.path)).toEqual(["ending_before"])
    })
  })
