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
 * The order in which transactions take the locks they share (docs/performance.md, "The usage
 * counters before the conversations"): the usage counters, then conversations, then stock. Each
 * test plays one transaction from outside the server, statement by statement, stops it where it
 * holds one lock, lets the server's transaction run into it, and then asks for the lock the server
 * may hold. In the right order the server waits before it takes that lock; in the wrong one the two
 * wait for each other and PostgreSQL fails one (the platform soak met both, bench/SOAK.md).
 */
// Several sessions on one database: PostgreSQL only (the embedded database has one connection).
if (Postgres.url !== undefined) {
  const url = Postgres.url

  /** A server on a fresh schema, Cloud API transport against a mock Graph, and an account with a channel. */
  const stage = async () => {
    const graph = await MockGraph.start()
    cleanups.push(() => graph.close())
    const schema = await Postgres.freshSchema(url)
    const dataDir = ServerProcess.tempDataDir()
    cleanups.push(schema.drop, () => ServerProcess.removeDir(dataDir))
    const server = await ServerProcess.start({
      dataDir,
      env: {
        DATABASE_URL: schema.databaseUrl,
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
        { from: CUSTOMER, id, timestamp: String(Math.floor(Date.now() / 1000)), type: "text", text: { body: "Hello" } }
      ]
    })
    // The customer writes: their lead and conversation, and a window for texts.
    expect((await webhook(text("wamid.LOCKORDER1"))).status).toBe(200)
    const [customer] = await Postgres.query<{ id: string; lead_id: string }>(
      schema.databaseUrl,
      `SELECT id, lead_id FROM conversations WHERE contact_wa_id = '${CUSTOMER}'`
    )
    /** Until the server's transaction waits for a lock in the statement that matches `like`. */
    const waitingIn = async (like: string) => {
      const waiting = await until(
        () =>
          Postgres.query<{ n: number }>(
            url,
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '${like}'`
          ),
        (rows) => rows[0]!.n > 0,
        10_000
      )
      expect(waiting[0]!.n, `a statement like ${like} waiting for a lock`).toBe(1)
    }
    return { graph, schema, server, account, auth, webhook, text, customer: customer!, waitingIn }
  }

  describe("lock order, on PostgreSQL", () => {
    it("a webhook reviving a send, while a reply to its customer is queued: usage before conversations", async () => {
      const { graph, schema, server, account, auth, webhook, text, customer, waitingIn } = await stage()
      // A template to another lead, answered by a gateway's page: its outcome is unknown.
      graph.script(MockGraph.Reply.html(500))
      const lead = await call(server, "POST", "/api/v1/leads", {
        ...auth,
        json: { name: "Other", phone: "+14155550143" }
      })
      const sent = await call(server, "POST", "/api/v1/messages", {
        ...auth,
        json: { lead_id: lead.body.id, type: "template", template: { name: "order_update", language: "en_US" } }
      })
      expect(sent.status, sent.text).toBe(201)
      const unknown = await until(
        async () => (await call(server, "GET", `/api/v1/messages/${sent.body.id}`, auth)).body,
        (message) => message.status !== "queued",
        30_000
      )
      expect(unknown.error?.code).toBe("outcome_unknown")

      // A reply to the customer, as a send queues it (Messages.ts), stopped between its two writes:
      // its stripe of the usage counters taken, its conversation not yet.
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
      // A revival reserves with no limit, on the slow path: it waits for the reply's stripe.
      await waitingIn("%leadline_reserve_messages%")
      // The reply's second write: the customer's conversation, and the revived send's, which the
      // webhook also writes (it learns its wa_id). Neither is held: the webhook waits before them.
      await reply.run(
        `UPDATE conversations SET last_message_at = now(), updated_at = now()
         WHERE account_id = '${account.accountId}' AND id IN ('${customer.id}', '${unknown.conversation_id}')`
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

    it("an order cancelled with a notice, while a webhook holds the usage counters and wants stock: usage before stock", async () => {
      const { schema, server, account, auth, customer, waitingIn } = await stage()
      const product = await call(server, "POST", "/api/v1/catalogue/products", {
        ...auth,
        json: { sku: "LOCK-1", name: "Locked", unit_amount: 1000, currency: "USD", stock: 10 }
      })
      expect(product.status, product.text).toBe(201)
      const order = await call(server, "POST", "/api/v1/orders", {
        ...auth,
        json: { lead_id: customer.lead_id, items: [{ product_id: product.body.id, quantity: 2 }] }
      })
      expect(order.status, order.text).toBe(201)
      const notices = await call(server, "PATCH", "/api/v1/settings/order-notifications", {
        ...auth,
        json: { enabled: true }
      })
      expect(notices.status, notices.text).toBe(200)
      // A first send makes the account's usage stripes.
      const first = await call(server, "POST", `/api/v1/conversations/${customer.id}/messages`, {
        ...auth,
        json: { type: "text", text: "Thanks for your order" }
      })
      expect(first.status, first.text).toBe(201)

      // A webhook's transaction, as it runs: its statuses took the usage counters (a revival holds
      // every stripe), and its customer's cart will take stock. Stopped in between.
      const inbound = await Postgres.openTransaction(schema.databaseUrl)
      await inbound.run("SET LOCAL lock_timeout = '10s'")
      await inbound.run(`UPDATE message_usage SET used = used WHERE account_id = '${account.accountId}'`)
      // The cancel: its notice reserves, and waits for the stripes the webhook holds.
      const cancelled = call(server, "PATCH", `/api/v1/orders/${order.body.id}`, {
        ...auth,
        json: { status: "cancelled" }
      })
      await waitingIn("%leadline_reserve_messages%")
      // The cart: every stripe of the product's stock, as an order that asks for it takes them. The
      // cancel has not given its units back yet, so it holds none of them.
      await inbound.run(
        `SELECT stock FROM product_stock WHERE account_id = '${account.accountId}' AND product_id = '${product.body.id}'
         ORDER BY stripe FOR UPDATE`
      )
      await inbound.commit()
      const answer = await cancelled
      expect(answer.status, answer.text).toBe(200)
      expect(answer.body.status).toBe("cancelled")
      const after = await call(server, "GET", `/api/v1/catalogue/products/${product.body.id}`, auth)
      expect(after.body.stock).toBe(10)
      const notice = await call(server, "GET", `/api/v1/conversations/${customer.id}/messages?limit=1`, auth)
      expect(notice.body.messages[0].text).toBe(`Your order ${order.body.id} is now canceled.`)
    }, 120_000)
  })
}
