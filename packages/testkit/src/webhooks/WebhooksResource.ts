import { expect } from "vitest"
import type { AccountFixture } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { listAll, neverIssued, until } from "../internal/wire.ts"
import { createLead } from "../leads/LeadsResource.ts"
import type * as MockReceiver from "../MockReceiver.ts"
import * as Resource from "../Resource.ts"

export interface RegisteredEndpoint {
  readonly id: string
  readonly url: string
  readonly secret: string
  /** The registration answer, the only one that shows the secret. */
  readonly text: string
  /** Where the requests arrive, when the context has a receiver. */
  readonly endpoint: MockReceiver.Endpoint | undefined
}

let paths = 0

/**
 * Registers an endpoint for `events` with the key: on the context's receiver when
 * it has one, else at an address that never resolves. `order.created` never fires
 * today, so the default endpoint stays quiet.
 */
export const registerEndpoint = async (
  context: Resource.Context,
  key: string,
  events: ReadonlyArray<string> = ["order.created"]
): Promise<RegisteredEndpoint> => {
  const endpoint = context.receiver?.endpoint(`/security-${++paths}`)
  const url = endpoint?.url ?? `https://receiver.invalid/leadline/${crypto.randomUUID()}`
  const reply = await call(context.target, "POST", "/api/webhooks/endpoints", { auth: key, json: { url, events } })
  expect(reply.status, reply.text).toBe(201)
  return { id: reply.body.id, url, secret: reply.body.secret, text: reply.text, endpoint }
}

export interface DeliveryView {
  readonly id: string
  readonly event_id: string
  readonly endpoint_id: string
  readonly status: string
  readonly attempts: ReadonlyArray<unknown>
}

/** The first page of the delivery log the key sees, with `query` (`?endpoint_id=…`). */
export const deliveriesOf = async (
  context: Resource.Context,
  key: string,
  query = ""
): Promise<ReadonlyArray<DeliveryView>> => {
  const reply = await call(context.target, "GET", `/api/webhooks/deliveries${query}`, { auth: key })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.deliveries
}

/**
 * A real delivery: an endpoint for lead.created, a lead, and the log showing its
 * delivery; delivered, when the context has a receiver, else still being tried.
 */
export const makeDelivery = async (context: Resource.Context, key: string) => {
  const endpoint = await registerEndpoint(context, key, ["lead.created"])
  const lead = await createLead(context.target, key)
  await endpoint.endpoint?.waitFor(1)
  const [delivery] = await until(
    () => deliveriesOf(context, key, `?endpoint_id=${endpoint.id}`),
    (list) => (endpoint.endpoint === undefined ? list.length > 0 : list[0]?.status === "delivered")
  )
  expect(delivery).toBeDefined()
  if (endpoint.endpoint !== undefined) expect(delivery?.status).toBe("delivered")
  return { endpoint, lead, delivery: delivery! }
}

/** One delivery per account, made on first use: redelivering needs a real one, and making one takes a round trip. */
const shared = new Map<string, Promise<{ readonly delivery: DeliveryView }>>()
const deliveryFor = (context: Resource.Context, account: AccountFixture) => {
  let made = shared.get(account.accountId)
  if (made === undefined) {
    made = makeDelivery(context, account.ownerKey)
    shared.set(account.accountId, made)
  }
  return made
}

const findIn = async (context: Resource.Context, key: string, path: string, field: string, id: string) =>
  (await listAll(context.target, key, path, field)).find((item: { id: string }) => item.id === id)

const endpointIsolation: Resource.Isolation = {
  noun: "webhook endpoint",
  make: async (context, key) => (await registerEndpoint(context, key)).id,
  read: (context, key, id) => findIn(context, key, "/api/webhooks/endpoints", "endpoints", id),
  unknownId: () => crypto.randomUUID()
}

const endpointAt = (id: string) => ({ path: `/api/webhooks/endpoints?id=${id}` })
const rotation = (id: string) => ({
  path: `/api/webhooks/endpoints/rotate-secret?id=${id}`,
  json: { overlap_seconds: 60 }
})
const recovery = (id: string) => ({
  path: `/api/webhooks/endpoints/recover?id=${id}`,
  json: { since: "2026-01-01T00:00:00Z" }
})

export const endpoints: Resource.Resource = {
  name: "webhook endpoints",
  routes: [
    {
      method: "POST",
      path: "/api/webhooks/endpoints",
      needs: "full access",
      succeeds: 201,
      request: async (context, account) => {
        const url =
          context.receiver?.endpoint(`/security-${++paths}`).url ??
          `https://receiver.invalid/leadline/${crypto.randomUUID()}`
        return {
          path: "/api/webhooks/endpoints",
          json: { url, events: ["order.created"] },
          unchanged: async () => {
            const listed = await listAll(context.target, account.ownerKey, "/api/webhooks/endpoints", "endpoints")
            expect(listed.map((endpoint: { url: string }) => endpoint.url)).not.toContain(url)
          }
        }
      }
    },
    {
      method: "GET",
      path: "/api/webhooks/endpoints",
      needs: "full access",
      succeeds: 200,
      lists: "endpoints",
      request: async () => ({ path: "/api/webhooks/endpoints" })
    },
    {
      method: "PATCH",
      path: "/api/webhooks/endpoints",
      needs: "full access",
      succeeds: 200,
      addresses: (id) => ({ ...endpointAt(id), json: { description: "Changed" } }),
      request: Resource.aimedAt(endpointIsolation, (id) => ({ ...endpointAt(id), json: { description: "Changed" } }))
    },
    {
      method: "POST",
      path: "/api/webhooks/endpoints/rotate-secret",
      needs: "full access",
      succeeds: 200,
      addresses: (id) => rotation(id),
      request: Resource.aimedAt(endpointIsolation, rotation)
    },
    {
      method: "POST",
      path: "/api/webhooks/endpoints/recover",
      needs: "full access",
      succeeds: 200,
      addresses: (id) => recovery(id),
      request: Resource.aimedAt(endpointIsolation, recovery)
    },
    {
      method: "DELETE",
      path: "/api/webhooks/endpoints",
      needs: "full access",
      succeeds: 200,
      addresses: endpointAt,
      request: Resource.aimedAt(endpointIsolation, endpointAt)
    }
  ],
  isolation: endpointIsolation,
  ledger: {
    tables: [
      {
        name: "webhook_endpoints",
        account: "account_id",
        // A deleted endpoint stays as a row: its deliveries keep their history.
        rows: Resource.perOperation({ "POST /api/webhooks/endpoints": 1 })
      }
    ],
    ids: {
      field: "id",
      create: "POST /api/webhooks/endpoints",
      update: "PATCH /api/webhooks/endpoints",
      remove: "DELETE /api/webhooks/endpoints",
      list: { path: "/api/webhooks/endpoints", field: "endpoints" },
      parameters: [
        "/api/webhooks/endpoints id",
        "/api/webhooks/endpoints/rotate-secret id",
        "/api/webhooks/endpoints/recover id",
        "/api/webhooks/deliveries endpoint_id"
      ]
    }
  }
}

const deliveryIsolation: Resource.Isolation = {
  noun: "delivery",
  make: async (context, key) => (await makeDelivery(context, key)).delivery.id,
  read: (context, key, id) => findIn(context, key, "/api/webhooks/deliveries", "deliveries", id),
  unknownId: () => neverIssued("dlv"),
  // Without a receiver the delivery is still being retried, so it would not read the same twice.
  needsReceiver: true
}

export const deliveries: Resource.Resource = {
  name: "webhook deliveries",
  routes: [
    {
      method: "GET",
      path: "/api/webhooks/deliveries",
      needs: "full access",
      succeeds: 200,
      lists: "deliveries",
      request: async () => ({ path: "/api/webhooks/deliveries" })
    },
    {
      method: "POST",
      path: "/api/webhooks/deliveries/redeliver",
      needs: "full access",
      succeeds: 200,
      addresses: (id) => ({ path: `/api/webhooks/deliveries/redeliver?id=${id}` }),
      // An allowed redelivery requeues the delivery, so this one is shared and not compared.
      request: async (context, account) => ({
        path: `/api/webhooks/deliveries/redeliver?id=${(await deliveryFor(context, account)).delivery.id}`
      })
    }
  ],
  isolation: deliveryIsolation,
  ledger: {
    tables: [
      {
        name: "events",
        account: "account_id",
        rows: Resource.computed((answer) => answer.events.length)
      },
      {
        name: "webhook_deliveries",
        account: "account_id",
        // One per event and endpoint listening for its type, made in the event's transaction.
        rows: Resource.computed((answer) =>
          answer.events
            .map(
              (type) =>
                answer
                  .live("webhook endpoints")
                  .filter((endpoint: { enabled: boolean; events: ReadonlyArray<string> }) => {
                    return endpoint.enabled && endpoint.events.includes(type)
                  }).length
            )
            .reduce((sum, n) => sum + n, 0)
        )
      },
      {
        name: "webhook_attempts",
        account: undefined,
        rows: Resource.uncounted(
          "written by the worker on its own schedule, also for the deliveries of earlier fuzzed accounts still being retried: its account_id is left out, so those rows are not taken for writes to another account"
        )
      }
    ],
    ids: {
      field: "id",
      list: { path: "/api/webhooks/deliveries", field: "deliveries" },
      parameters: ["/api/webhooks/deliveries/redeliver id"]
    }
  }
}
