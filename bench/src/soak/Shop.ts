import * as Processes from "../Processes.ts"
import { type Api, expect } from "./Api.ts"
import type { Customer } from "./Meta.ts"

/**
 * The account the messaging and commerce load runs in: a WhatsApp channel on the Cloud API
 * transport, an enabled agent answering from a knowledge source, one product with tracked stock,
 * order notices on, a webhook endpoint for every kind of event this load makes, the customers
 * (leads that will write on WhatsApp) and the campaign's audience.
 */

export const PHONE_NUMBER_ID = "106540352242922"
export const DISPLAY_PHONE_NUMBER = "16505551111"
export const SKU = "HOT-1"
export const PROMO_TAG = "promo"

/** The event types the shop's endpoint subscribes to: every one this load makes. */
export const SHOP_EVENTS = [
  "lead.created",
  "conversation.created",
  "conversation.status_changed",
  "message.received",
  "message.sent",
  "message.status_changed",
  "order.created",
  "order.status_changed",
  "campaign.queued",
  "campaign.completed"
] as const

export interface Shop {
  readonly accountId: string
  readonly key: string
  readonly channelId: string
  readonly agentId: string
  readonly productId: string
  readonly initialStock: number
  readonly endpointId: string
  readonly customers: ReadonlyArray<Customer>
  readonly promoLeads: ReadonlyArray<string>
}

/** Runs `work` over `items`, `concurrency` at a time. */
const pool = async <A, B>(items: ReadonlyArray<A>, concurrency: number, work: (item: A) => Promise<B>) => {
  const results: Array<B> = new Array(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const i = next++
        results[i] = await work(items[i]!)
      }
    })
  )
  return results
}

export const setUp = async (
  api: Api,
  options: {
    readonly receiverUrl: string
    readonly initialStock: number
    readonly customers: number
    readonly promoLeads: number
  }
): Promise<Shop> => {
  const admin = Processes.ADMIN_TOKEN
  const account = await expect(
    api.request("POST", "/admin/v1/accounts", { auth: admin, json: { name: "Soak shop", plan_id: "scale" } }),
    201,
    "create the shop's account"
  )
  const key = account.api_key as string
  const post = (path: string, body: unknown, what: string) =>
    expect(api.request("POST", path, { auth: key, json: body }), 201, what)
  const endpoint = await post(
    "/api/webhooks/endpoints",
    { url: options.receiverUrl, events: SHOP_EVENTS },
    "register the shop's webhook endpoint"
  )
  const channel = await post(
    "/api/v1/channels",
    {
      type: "whatsapp",
      name: "Soak",
      phone_number_id: PHONE_NUMBER_ID,
      display_phone_number: `+${DISPLAY_PHONE_NUMBER}`,
      access_token: "soak-access-token"
    },
    "connect the channel"
  )
  const source = await post(
    "/api/v1/knowledge/sources",
    {
      kind: "text",
      title: "Delivery",
      content:
        "We deliver every day but Sunday, Saturdays included. Delivery costs R$ 12 and is free above R$ 150. " +
        "Orders placed before 11 am are delivered the same afternoon."
    },
    "add a knowledge source"
  )
  const agent = await post(
    "/api/v1/agents",
    {
      name: "Ana",
      instructions: "You are Ana, the assistant of the soak's shop.",
      enabled: true,
      knowledge_source_ids: [source.id],
      // Answers what it cannot find with its fallback rather than handing the conversation off,
      // so every text of a conversation is answered.
      handoff: { on_no_knowledge: false },
      fallback_message: "Thanks for writing! A teammate will answer you shortly."
    },
    "create the agent"
  )
  const product = await post(
    "/api/v1/catalogue/products",
    { sku: SKU, name: "The hot product", unit_amount: 1290, currency: "BRL", stock: options.initialStock },
    "create the hot product"
  )
  await expect(
    api.request("PATCH", "/api/v1/settings/order-notifications", { auth: key, json: { enabled: true } }),
    200,
    "turn order notices on"
  )
  const lead = (name: string, phone: string, tags: ReadonlyArray<string>) =>
    post("/api/v1/leads", { name, phone, tags }, `create lead ${phone}`).then((lead) => lead.id as string)
  const customers = await pool(
    Array.from({ length: options.customers }, (_, i) => i),
    8,
    async (i): Promise<Customer> => {
      const waId = `551198${1_000_000 + i}`
      return { waId, name: `Customer ${i}`, leadId: await lead(`Customer ${i}`, `+${waId}`, ["customer"]) }
    }
  )
  const promoLeads = await pool(
    Array.from({ length: options.promoLeads }, (_, i) => i),
    8,
    (i) => lead(`Promo ${i}`, `+553198${1_000_000 + i}`, [PROMO_TAG])
  )
  return {
    accountId: account.account_id,
    key,
    channelId: channel.id,
    agentId: agent.id,
    productId: product.id,
    initialStock: options.initialStock,
    endpointId: endpoint.id,
    customers,
    promoLeads
  }
}
