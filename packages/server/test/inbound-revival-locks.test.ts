import { afterAll, describe, expect, it } from "vitest"
import { makeAccount } from "@leadline/testkit/Fixtures"
import { call } from "@leadline/testkit/Http"
import * as MockGraph from "@leadline/testkit/whatsapp/MockGraph"
import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import * as MetaSignature from "@leadline/whatsapp-adapter/meta/MetaSignature"
import * as Postgres from "./support/Postgres.ts"
import * as ServerProcess from "./support/ServerProcess.ts"
import { until } from "./support/Until.ts"

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

const APP_SECRET = "lock-order-app-secret"
const PHONE_NUMBER_ID = "5550042"
const CUSTOMER = "14155550142"

/**
 * A webhook that holds a customer's next message and WhatsApp's status reviving a send whose
 * outcome was unknown, while a reply to that customer is being queued. The reply takes its usage
 * stripe, then its conversation (Messages.ts); the revival's reservation waits for every stripe.
 * The webhook used to lock the customer's conversation (storing the message) and the revived
 * message's (learning its wa_id) before reserving: a deadlock, which PostgreSQL broke by failing
 * one of them, a 500 for the reply's caller (the platform soak met it, bench/SOAK.md). The send is
 * played here from outside the server, statement by statement, with the server's deadlock check
 * held off so that a cycle shows as the reply waiting, not as a victim.
 */
// Several sessions on one database: PostgreSQL only (the embedded database has one connection).
if (Postgres.url !== undefined) {
  const url = Postgres.url
  describe("a webhook reviving a send, while a reply to its customer is queued, on PostgreSQL", () => {
    it("takes the usage counters before the conversations, as a send does: neither waits for the other", async () => {
      const graph = await MockGraph.start()
      cleanups.push(() => graph.close())
      // The first send's answer is a gateway's page: its outcome is unknown.
      graph.script(MockGraph.Reply.html(500))
      const schema = await Postgres.freshSchema(url)
      const dataDir = ServerProcess.tempDataDir()
      cleanups.push(schema.drop, () => ServerProcess.removeDir(dataDir))
      const databaseUrl = new URL(schema.databaseUrl)
      databaseUrl.searchParams.set("options", `${databaseUrl.searchParams.get("options")} -c deadlock_timeout=60s`)
      const server = await ServerProcess.start({
        dataDir,
        env: {
          DATABASE_URL: databaseUrl.toString(),
          WHATSAPP_TRANSPORT: "cloud",
          WHATSAPP_APP_SECRET: APP_SECRET,
          WHATSAPP_VERIFY_TOKEN: "lock-order-verify-token",
          WHATSAPP_API_BASE_URL: graph.url,
          WHATSAPP_TEMPLATES_SYNC_SECONDS: "0"
        }
      })
      cleanups.push(() => server.stop())
      const account = await makeAccount(server)
      const auth = { auth: account.ownerKey }
      const channel = await call(server, "POST", "/api/v1/channels", {
        ...auth,
        json: {
          type: "whatsapp",
          name: "Lock order",
          phone_number_id: PHONE_NUMBER_ID,
          display_phone_number: "+16505551111",
          access_token: "EAAG-lock-order"
        }
      })
      expect(channel.status, channel.text).toBe(201)
      const webhook = (value: Record<string, unknown>) => {
        const raw = MetaPayloads.messagesChangePayload(PHONE_NUMBER_ID, "16505551111", value)
        return fetch(`${server.baseUrl}/webhooks/whatsapp`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-hub-signature-256": MetaSignature.sign(APP_SECRET, raw) },
          body: raw
        })
      }
      const text = (id: string) => ({
        contacts: [{ profile: { name: "Customer" }, wa_id: CUSTOMER }],
        messages: [
          {
            from: CUSTOMER,
            id,
            timestamp: String(Math.floor(Date.now() / 1000)),
            type: "text",
            text: { body: "Hello" }
          }
        ]
      })
      expect((await webhook(text("wamid.LOCKORDER1"))).status).toBe(200)
      const [customer] = await Postgres.query<{ id: string }>(
        schema.databaseUrl,
        `SELECT id FROM conversations WHERE contact_wa_id = '${CUSTOMER}'`
      )

      // A template to another lead, which Graph may or may not have: outcome_unknown.
      const lead = await call(server, "POST", "/api/v1/leads", {
        ...auth,
        json: { name: "Other", phone: "+14155550143" }
      })
      const sent = await call(server, "POST", "/api/v1/messages", {
        ...auth,
        json: {
          lead_id: lead.body.id,
          type: "template",
          template: { name: "order_update", language: "en_US" }
        }
      })
      expect(sent.status, sent.text).toBe(201)
      const unknown = await until(
        async () => (await call(server, "GET", `/api/v1/messages/${sent.body.id}`, auth)).body,
        (message) => message.status !== "queued",
        30_000
      )
      expect(unknown.error?.code).toBe("outcome_unknown")

      // A reply to the customer, as a send queues it, stopped between its two writes: its stripe
      // of the usage counters taken, its conversation not yet.
      const reply = await Postgres.openTransaction(schema.databaseUrl)
      await reply.run("SET LOCAL lock_timeout = '10s'")
      const [stripes] = await reply.run<{ limit: number; period: string }>(
        `SELECT balanced_for AS limit, period FROM message_usage WHERE account_id = '${account.accountId}' LIMIT 1`
      )
      const [reserved] = await reply.run<{ fits: boolean }>(
        `SELECT leadline_reserve_messages('${account.accountId}'::uuid, '${stripes!.period}', 1, ${stripes!.limit}) AS fits`
      )
      expect(reserved!.fits).toBe(true)

      // One webhook: the customer's next message, and WhatsApp's word that the unknown send arrived.
      const answer = webhook({
        ...text("wamid.LOCKORDER2"),
        statuses: [
          {
            id: "wamid.LOCKORDERSENT",
            status: "delivered",
            timestamp: String(Math.floor(Date.now() / 1000)),
            recipient_id: "14155550143",
            biz_opaque_callback_data: sent.body.id
          }
        ]
      })
      // It reaches the revival's reservation and waits there for the reply's stripe.
      const waiting = await until(
        () =>
          Postgres.query<{ n: number }>(
            url,
            `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE wait_event_type = 'Lock' AND query LIKE '%leadline_reserve_messages%'`
          ),
        (rows) => rows[0]!.n > 0,
        10_000
      )
      expect(waiting[0]!.n).toBe(1)
      // The reply's second write: the customer's conversation, and the revived send's, which the
      // webhook also writes (it learns its wa_id). Neither is held: the webhook waits before them.
      await reply.run(
        `UPDATE conversations SET last_message_at = now(), updated_at = now()
         WHERE account_id = '${account.accountId}' AND id IN ('${customer!.id}', '${unknown.conversation_id}')`
      )
      await reply.commit()
      expect((await answer).status).toBe(200)
      const revived = (await call(server, "GET", `/api/v1/messages/${sent.body.id}`, auth)).body
      expect(revived).toMatchObject({ status: "delivered", error: null, external_id: "wamid.LOCKORDERSENT" })
      const stored = await Postgres.query<{ n: number }>(
        schema.databaseUrl,
        "SELECT count(*)::int AS n FROM messages WHERE external_id = 'wamid.LOCKORDER2'"
      )
      expect(stored[0]!.n).toBe(1)
    }, 120_000)
  })
}
