import { describe, expect, it } from "vitest"
import { call } from "../Http.ts"
import { forbidden } from "../internal/wire.ts"
import type { ContractContext } from "../Slice.ts"
import { CHANNEL_KEYS, channelBody, createChannel, postChannel, readChannel } from "./ChannelsResource.ts"

/** Channels: connecting a number, the write-only token, global uniqueness of the number, scopes. */
export const contract = (context: ContractContext) => {
  describe("channels", () => {
    it("connects a number with a normalised display number, and never returns the token", async () => {
      const reply = await call(context.target, "POST", "/api/v1/channels", {
        auth: context.acme.ownerKey,
        json: channelBody({ name: "Sales", display_phone_number: "+1 (650) 555-1111", access_token: "EAAG-secret" })
      })
      expect(reply.status, reply.text).toBe(201)
      expect(Object.keys(reply.body).sort()).toEqual(CHANNEL_KEYS)
      expect(reply.body).toMatchObject({
        type: "whatsapp",
        name: "Sales",
        display_phone_number: "+16505551111",
        business_account_id: null,
        status: "active",
        last_error: null
      })
      expect(reply.body.id).toMatch(/^ch_[0-9a-z]{26}$/)
      expect(reply.text).not.toContain("EAAG-secret")
      const read = await readChannel(context.target, context.acme.ownerKey, reply.body.id)
      expect(read).toEqual(reply.body)
      const list = await call(context.target, "GET", "/api/v1/channels", { auth: context.acme.ownerKey })
      expect(list.text).not.toContain("EAAG-secret")
      expect(list.body.channels.map((c: { id: string }) => c.id)).toContain(reply.body.id)
    })

    it("refuses a phone_number_id connected already, in any account, without saying which", async () => {
      const first = await createChannel(context.target, context.other.ownerKey)
      const again = await postChannel(context.target, context.acme.ownerKey, { phone_number_id: first.phone_number_id })
      expect(again.status).toBe(409)
      expect(again.body).toEqual({ error: "This phone_number_id is already connected", code: "conflict" })
    })

    it("renames, disables and re-keys a channel; updated_at moves", async () => {
      const channel = await createChannel(context.target, context.acme.ownerKey)
      const patched = await call(context.target, "PATCH", `/api/v1/channels/${channel.id}`, {
        auth: context.acme.ownerKey,
        json: { name: "Renamed", status: "disabled", access_token: "EAAG-new" }
      })
      expect(patched.status, patched.text).toBe(200)
      expect(patched.body).toMatchObject({ id: channel.id, name: "Renamed", status: "disabled" })
      expect(patched.body.updated_at >= (channel.updated_at as string)).toBe(true)
      expect(patched.text).not.toContain("EAAG-new")
    })

    it("refuses bad input with every problem named, and changes nothing", async () => {
      const total = async () =>
        (await call(context.target, "GET", "/api/v1/channels?limit=1", { auth: context.acme.ownerKey })).body.meta.total
      const before = await total()
      const reply = await postChannel(context.target, context.acme.ownerKey, {
        type: "sms",
        name: "",
        display_phone_number: "12345"
      })
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body.code).toBe("validation_error")
      expect(reply.body.details.map((d: { path: string }) => d.path).sort()).toEqual([
        "display_phone_number",
        "name",
        "type"
      ])
      expect(await total()).toBe(before)
    })

    it("lets conversations:read list channels but not connect one", async () => {
      const reader = context.acme.keys.conversations!.apiKey
      expect((await call(context.target, "GET", "/api/v1/channels", { auth: reader })).status).toBe(200)
      const refused = await postChannel(context.target, reader)
      expect(refused.status).toBe(403)
      expect(refused.body).toEqual(forbidden("full access"))
      const leads = await call(context.target, "GET", "/api/v1/channels", {
        auth: context.acme.keys.leadsWrite!.apiKey
      })
      expect(leads.status).toBe(403)
      expect(leads.body).toEqual(forbidden("conversations:read"))
    })
  })
}
