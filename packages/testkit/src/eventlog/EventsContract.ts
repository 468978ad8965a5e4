import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import { beforeAll, describe, expect, it } from "vitest"
import { makeConversation, postWebhook } from "../conversations/ConversationsResource.ts"
import { type AccountFixture, makeAccount, makeUser } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { createLead } from "../leads/LeadsResource.ts"
import type { ContractContext } from "../Slice.ts"
import { EVENTS, eventsOf } from "./EventsResource.ts"

/**
 * Every change as an event, and the log that lists them (docs/contract.md, "Events"): leads'
 * changes with what they were, conversations' beginnings, assignments and statuses, a keyword
 * opt-out; the list's filters, cursors, scopes and refusals.
 */
export const contract = (context: ContractContext) =>
  describe("events", () => {
    describe("a lead's changes, listed", () => {
      let fixture: AccountFixture
      let leadId: string
      let ids: Array<string>

      beforeAll(async () => {
        fixture = await makeAccount(context.target, { name: "Eventful" })
        const key = fixture.ownerKey
        const lead = await createLead(context.target, key, { name: "Ada", tags: ["a"] })
        leadId = lead.id
        const patch = (json: Record<string, unknown>) =>
          call(context.target, "PATCH", `/api/v1/leads/${leadId}`, { auth: key, json })
        expect((await patch({ name: "Ada L", status: "contacted" })).status).toBe(200)
        // The same values again: nothing changes, so no event.
        expect((await patch({ name: "Ada L", status: "contacted" })).status).toBe(200)
        expect((await patch({ tags: ["a", "b"] })).status).toBe(200)
        expect((await call(context.target, "DELETE", `/api/v1/leads/${leadId}`, { auth: key })).status).toBe(200)
        ids = (await eventsOf(context.target, key, "?type=lead.*")).events.map((event) => event.id)
      })

      it("lists them newest first, each change with the old values of exactly the fields that changed", async () => {
        const { events, meta } = await eventsOf(context.target, fixture.ownerKey, "?type=lead.*")
        expect(events.map((event) => event.type)).toEqual([
          "lead.deleted",
          "lead.updated",
          "lead.updated",
          "lead.created"
        ])
        expect(events.every((event) => event.data.id === leadId)).toBe(true)
        const [tags, renamed] = [events[1]!, events[2]!]
        expect(renamed.previous_attributes).toEqual({ name: "Ada", status: "new" })
        expect(renamed.data).toMatchObject({ name: "Ada L", status: "contacted", tags: ["a"] })
        expect(tags.previous_attributes).toEqual({ tags: ["a"] })
        expect(events[3]!.previous_attributes).toBeUndefined()
        expect(meta).toEqual({ limit: 50, has_more: false, next_starting_after: null, previous_ending_before: null })
      })

      it("filters by type, family and time", async () => {
        const only = (query: string) =>
          eventsOf(context.target, fixture.ownerKey, query).then(({ events }) => events.map((event) => event.id))
        expect(await only("?type=lead.created")).toEqual([ids[3]])
        expect(await only("?type=lead.created,lead.deleted")).toEqual([ids[0], ids[3]])
        const all = (await eventsOf(context.target, fixture.ownerKey, "?type=lead.*")).events
        const at = encodeURIComponent(all[2]!.created_at)
        // Times compare at the millisecond: what shares the rename's splits by that time alone.
        const after = await only(`?type=lead.*&created_after=${at}`)
        const before = await only(`?type=lead.*&created_before=${at}`)
        expect(after.slice(0, 3)).toEqual(ids.slice(0, 3))
        expect(before.every((id) => !after.includes(id))).toBe(true)
        expect([...after, ...before].sort()).toEqual([...ids].sort())
      })

      it("pages by cursor both ways", async () => {
        const key = fixture.ownerKey
        const seen: Array<string> = []
        let cursor: string | null = null
        for (let guard = 0; guard < 10; guard++) {
          const page = await eventsOf(
            context.target,
            key,
            `?type=lead.*&limit=1${cursor === null ? "" : `&starting_after=${cursor}`}`
          )
          seen.push(...page.events.map((event) => event.id))
          cursor = page.meta.next_starting_after
          if (cursor === null) break
        }
        expect(seen).toEqual(ids)
        const back = await eventsOf(context.target, key, `?type=lead.*&limit=2&ending_before=${ids[3]}`)
        expect(back.events.map((event) => event.id)).toEqual([ids[1], ids[2]])
        expect(back.meta).toEqual({
          limit: 2,
          has_more: true,
          next_starting_after: ids[2],
          previous_ending_before: ids[1]
        })
      })

      it("shows a key the events of what it may read, and refuses a type it may not see", async () => {
        const keys = context.acme.keys
        await createLead(context.target, context.acme.ownerKey)
        const leads = await eventsOf(context.target, keys.leadsRead!.apiKey)
        expect(leads.events.length).toBeGreaterThan(0)
        expect(leads.events.every((event) => event.type.startsWith("lead."))).toBe(true)
        const threads = await eventsOf(context.target, keys.conversations!.apiKey)
        expect(threads.events.some((event) => event.type.startsWith("lead."))).toBe(false)
        const refused = await call(context.target, "GET", `${EVENTS}?type=message.received`, {
          auth: keys.leadsRead!.apiKey
        })
        expect(refused.status).toBe(403)
        expect(refused.body).toEqual({ error: "Insufficient scope: requires conversations:read", code: "forbidden" })
        const none = await call(context.target, "GET", EVENTS, { auth: keys.analytics!.apiKey })
        expect(none.status).toBe(403)
        expect(none.body).toEqual({ error: "Insufficient scope: requires leads:read", code: "forbidden" })
      })

      it("never lists another account's events, nor pages from one", async () => {
        const other = await makeAccount(context.target, { name: "Elsewhere" })
        const theirs = await eventsOf(context.target, other.ownerKey)
        expect(theirs.events.filter((event) => ids.includes(event.id))).toEqual([])
        const cursor = await call(context.target, "GET", `${EVENTS}?starting_after=${ids[0]}`, { auth: other.ownerKey })
        expect(cursor.status).toBe(400)
        expect(cursor.body.details).toEqual([{ path: "starting_after", message: "no such event in this account" }])
      })

      it.each([
        ["tpye=lead.created", "tpye"],
        ["type=lead.bogus", "type"],
        ["type=lead.created,", "type"],
        ["type=*", "type"],
        ["created_after=yesterday", "created_after"],
        ["created_before=2026-01-01", "created_before"],
        ["starting_after=xyz", "starting_after"],
        ["starting_after=evt_01jzzzzzzzzzzzzzzzzzzzzzzz", "starting_after"],
        ["limit=0", "limit"],
        ["limit=101", "limit"]
      ])("refuses %s with a 400 naming the parameter", async (query, parameter) => {
        const reply = await call(context.target, "GET", `${EVENTS}?${query}`, { auth: fixture.ownerKey })
        expect(reply.status, reply.text).toBe(400)
        expect(reply.body.code).toBe("validation_error")
        expect(reply.body.details.map((detail: { path: string }) => detail.path)).toContain(parameter)
      })

      it("refuses both cursors at once", async () => {
        const reply = await call(context.target, "GET", `${EVENTS}?starting_after=${ids[0]}&ending_before=${ids[3]}`, {
          auth: fixture.ownerKey
        })
        expect(reply.status).toBe(400)
        expect(reply.body.details.map((detail: { path: string }) => detail.path)).toEqual(["ending_before"])
      })
    })

    describe("a conversation's life, as events", () => {
      it("tells its beginning, each assignment and status change, and a reopening by the lead", async () => {
        const account = await makeAccount(context.target, { name: "Threads" })
        const key = account.ownerKey
        const userId = await makeUser(context.target, account.accountId, "member")
        const { channel, from, conversation } = await makeConversation(context.target, key, "Hi")
        const patch = async (json: Record<string, unknown>) => {
          const reply = await call(context.target, "PATCH", `/api/v1/conversations/${conversation.id}`, {
            auth: key,
            json
          })
          expect(reply.status, reply.text).toBe(200)
        }
        await patch({ assigned_user_id: userId })
        await patch({ status: "resolved" })
        // The same again changes nothing.
        await patch({ status: "resolved" })
        const raw = MetaPayloads.inboundTextPayload({
          phoneNumberId: channel.phone_number_id as string,
          displayPhoneNumber: "16505551111",
          from,
          name: "Ada Customer",
          text: "One more thing",
          externalId: `wamid.${crypto.randomUUID()}`,
          timestamp: new Date()
        })
        expect((await postWebhook(context.target, raw)).status).toBe(200)

        const { events } = await eventsOf(context.target, key, "?type=conversation.*")
        expect(events.map((event) => event.type)).toEqual([
          "conversation.status_changed",
          "conversation.status_changed",
          "conversation.assigned",
          "conversation.created"
        ])
        expect(events.every((event) => event.data.id === conversation.id)).toBe(true)
        const [reopened, resolved, assigned, created] = events
        expect(created!.data).toMatchObject({ status: "open", assigned_user_id: null })
        expect(assigned!.data.assigned_user_id).toBe(userId)
        expect(assigned!.previous_attributes).toEqual({ assigned_user_id: null })
        expect(resolved!.previous_attributes).toEqual({ status: "open" })
        expect(resolved!.data.status).toBe("resolved")
        expect(reopened!.previous_attributes).toEqual({ status: "resolved" })
        expect(reopened!.data.status).toBe("open")
      })

      it("tells a keyword opt-out as the lead's change", async () => {
        const account = await makeAccount(context.target, { name: "Stoppers" })
        const key = account.ownerKey
        const { conversation } = await makeConversation(context.target, key, "STOP")
        const { events } = await eventsOf(context.target, key, "?type=lead.updated")
        expect(events).toHaveLength(1)
        expect(events[0]!.data.id).toBe(conversation.lead_id)
        expect(events[0]!.data.marketing_opt_out).toMatchObject({ source: "whatsapp_keyword", reason: "STOP" })
        expect(events[0]!.previous_attributes).toEqual({ marketing_opt_out: null })
      })
    })
  })
