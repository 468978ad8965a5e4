import { expect } from "vitest"
import * as MetaSignature from "@leadline/whatsapp-adapter/meta/MetaSignature"
import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import { createChannel } from "../channels/ChannelsResource.ts"
import { call } from "../Http.ts"
import { neverIssued } from "../internal/wire.ts"
import * as Resource from "../Resource.ts"
import type { Target } from "../TestServer.ts"
import { receiveFile, simulatedImage } from "./InboundMedia.ts"
import { formOf, pngFile, upload } from "./OutboundMedia.ts"

/** A template send: templates need no open 24-hour window. */
export const TEMPLATE_SEND = { type: "template", template: { name: "hello_world", language: "en_US" } }

/** A reaction any message WhatsApp has can take. */
const REACTION = { emoji: "👍" }

let senderCounter = 0
/**
 * WhatsApp's `from` of a customer no test has used: digits, no plus. It ends in 9, never in
 * one of the simulator's scripted endings (0001 to 0005).
 */
export const nextWaId = () =>
  `1650${String(process.pid % 1000).padStart(3, "0")}${String(++senderCounter % 1000).padStart(3, "0")}9`

/** Posts bytes to the WhatsApp webhook as Meta would: signed with the server's app secret unless `signature` is given. */
export const postWebhook = (target: Target, raw: Uint8Array, signature?: string | null) => {
  if (target.whatsappAppSecret === undefined)
    throw new Error(
      "this target does not say its WhatsApp app secret: set WHATSAPP_APP_SECRET to the one the server verifies WhatsApp webhooks with"
    )
  const header = signature === undefined ? MetaSignature.sign(target.whatsappAppSecret, raw) : signature
  return fetch(`${target.baseUrl}/webhooks/whatsapp`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(header === null ? {} : { "x-hub-signature-256": header }) },
    body: raw
  })
}

/**
 * A customer writes in on a new channel of the key's account; the conversation it lands in.
 * `from` defaults to a number no lead has, so the message makes a lead too.
 */
export const makeConversation = async (target: Target, key: string, text = "Hello there", from = nextWaId()) => {
  const channel = await createChannel(target, key)
  const raw = MetaPayloads.inboundTextPayload({
    phoneNumberId: channel.phone_number_id,
    displayPhoneNumber: "16505551111",
    from,
    name: "Ada Customer",
    text,
    externalId: `wamid.${crypto.randomUUID()}`,
    // The server's time (its clock may have been moved by a test), so the 24-hour window is open.
    timestamp: new Date(channel.created_at as string)
  })
  const reply = await postWebhook(target, raw)
  expect(reply.status).toBe(200)
  const list = await call(target, "GET", `/api/v1/conversations?channel_id=${channel.id}`, { auth: key })
  expect(list.status, list.text).toBe(200)
  expect(list.body.conversations).toHaveLength(1)
  return { channel, from, conversation: list.body.conversations[0] as { id: string; lead_id: string } }
}

/**
 * The WhatsApp number of the account's newest lead: a message from it finds that lead rather than
 * making one, so a ledger that counts leads sees only the leads its routes made.
 */
const existingWaId = async (target: Target, key: string) => {
  const leads = await call(target, "GET", "/api/v1/leads?limit=1", { auth: key })
  expect(leads.body.leads, "a lead to write in as").toHaveLength(1)
  return (leads.body.leads[0].phone as string).slice(1)
}

const readAt = (path: string) => async (target: Target, key: string) => {
  const reply = await call(target, "GET", path, { auth: key })
  expect(reply.status, reply.text).toBe(200)
  return reply.body
}

const conversationIsolation: Resource.Isolation = {
  noun: "conversation",
  make: async ({ target }, key) => (await makeConversation(target, key)).conversation.id,
  read: ({ target }, key, id) => readAt(`/api/v1/conversations/${id}`)(target, key),
  unknownId: () => neverIssued("cv")
}

const messageIsolation: Resource.Isolation = {
  noun: "message",
  make: async ({ target }, key) => {
    const { conversation } = await makeConversation(target, key)
    const messages = await readAt(`/api/v1/conversations/${conversation.id}/messages`)(target, key)
    return messages.messages[0].id
  },
  read: ({ target }, key, id) => readAt(`/api/v1/messages/${id}`)(target, key),
  unknownId: () => neverIssued("msg")
}

const reads = ["conversations:read", "messages:send"] as const

/** A message with a kept file (the simulator's): what GET …/media serves. */
const mediaIsolation: Resource.Isolation = {
  noun: "message",
  make: async ({ target }, key) => (await receiveFile(target, key, simulatedImage())).messageId,
  read: ({ target }, key, id) => readAt(`/api/v1/messages/${id}`)(target, key),
  unknownId: () => neverIssued("msg")
}

export const conversations: Resource.Resource = {
  name: "conversations",
  routes: [
    {
      method: "GET",
      path: "/api/v1/conversations",
      needs: [...reads],
      succeeds: 200,
      lists: "conversations",
      request: async () => ({ path: "/api/v1/conversations" })
    },
    {
      method: "GET",
      path: "/api/v1/conversations/{id}",
      needs: [...reads],
      succeeds: 200,
      addresses: (id) => ({ path: `/api/v1/conversations/${id}` }),
      request: Resource.aimedAt(conversationIsolation, (id) => ({ path: `/api/v1/conversations/${id}` }))
    },
    {
      method: "PATCH",
      path: "/api/v1/conversations/{id}",
      needs: "full access",
      succeeds: 200,
      addresses: (id) => ({ path: `/api/v1/conversations/${id}`, json: { status: "resolved" } }),
      request: Resource.aimedAt(conversationIsolation, (id) => ({
        path: `/api/v1/conversations/${id}`,
        json: { status: "resolved" }
      }))
    },
    {
      method: "POST",
      path: "/api/v1/conversations/{id}/messages",
      needs: ["messages:send"],
      succeeds: 201,
      addresses: (id) => ({ path: `/api/v1/conversations/${id}/messages`, json: TEMPLATE_SEND }),
      request: Resource.aimedAt(conversationIsolation, (id) => ({
        path: `/api/v1/conversations/${id}/messages`,
        json: TEMPLATE_SEND
      }))
    },
    {
      method: "GET",
      path: "/api/v1/conversations/{id}/messages",
      needs: [...reads],
      succeeds: 200,
      addresses: (id) => ({ path: `/api/v1/conversations/${id}/messages` }),
      request: Resource.aimedAt(conversationIsolation, (id) => ({ path: `/api/v1/conversations/${id}/messages` }))
    },
    {
      method: "POST",
      path: "/api/v1/conversations/{id}/read",
      needs: ["messages:send"],
      succeeds: 200,
      addresses: (id) => ({ path: `/api/v1/conversations/${id}/read` }),
      request: Resource.aimedAt(conversationIsolation, (id) => ({ path: `/api/v1/conversations/${id}/read` }))
    }
  ],
  isolation: conversationIsolation,
  ledger: {
    tables: [
      {
        name: "conversations",
        account: "account_id",
        rows: Resource.uncounted("made by inbound WhatsApp messages, which no API route sends")
      }
    ],
    ids: {
      field: "id",
      update: "PATCH /api/v1/conversations/{id}",
      list: { path: "/api/v1/conversations", field: "conversations" },
      parameters: [
        "/api/v1/conversations/{id} id",
        "/api/v1/conversations/{id}/messages id",
        "/api/v1/conversations/{id}/read id"
      ],
      make: async ({ target }, account) =>
        (await makeConversation(target, account.ownerKey, "Seeded", await existingWaId(target, account.ownerKey)))
          .conversation.id
    },
    emits: {
      // Each change its own event: the assignee's, the status's (docs/contract-messaging.md §9).
      "PATCH /api/v1/conversations/{id}": (after, before) => [
        ...(before === undefined || after.assigned_user_id !== before.assigned_user_id
          ? ["conversation.assigned"]
          : []),
        ...(before === undefined || after.status !== before.status ? ["conversation.status_changed"] : [])
      ]
    }
  }
}

export const messages: Resource.Resource = {
  name: "messages",
  routes: [
    {
      method: "POST",
      path: "/api/v1/messages",
      needs: ["messages:send"],
      succeeds: 201,
      request: async ({ target }, account) => {
        const { conversation, channel } = await makeConversation(target, account.ownerKey)
        const before = await readAt(`/api/v1/conversations/${conversation.id}/messages`)(target, account.ownerKey)
        return {
          path: "/api/v1/messages",
          json: { ...TEMPLATE_SEND, lead_id: conversation.lead_id, channel_id: channel.id },
          unchanged: async () =>
            expect(await readAt(`/api/v1/conversations/${conversation.id}/messages`)(target, account.ownerKey)).toEqual(
              before
            )
        }
      }
    },
    {
      method: "GET",
      path: "/api/v1/messages/{id}",
      needs: [...reads],
      succeeds: 200,
      addresses: (id) => ({ path: `/api/v1/messages/${id}` }),
      request: Resource.aimedAt(messageIsolation, (id) => ({ path: `/api/v1/messages/${id}` }))
    },
    {
      method: "POST",
      path: "/api/v1/messages/{id}/reactions",
      needs: ["messages:send"],
      succeeds: 201,
      addresses: (id) => ({ path: `/api/v1/messages/${id}/reactions`, json: REACTION }),
      request: Resource.aimedAt(messageIsolation, (id) => ({
        path: `/api/v1/messages/${id}/reactions`,
        json: REACTION
      }))
    },
    {
      method: "GET",
      path: "/api/v1/messages/{id}/media",
      needs: [...reads],
      succeeds: 200,
      addresses: (id) => ({ path: `/api/v1/messages/${id}/media` }),
      request: Resource.aimedAt(mediaIsolation, (id) => ({ path: `/api/v1/messages/${id}/media` }))
    }
  ],
  isolation: messageIsolation,
  ledger: {
    tables: [
      {
        name: "messages",
        account: "account_id",
        rows: Resource.uncounted(
          "a send adds one, but deleting a lead removes its conversations' messages, as many as it had, and WhatsApp's webhook adds more"
        )
      },
      {
        name: "message_usage",
        account: "account_id",
        rows: Resource.uncounted("64 stripes per account and month, made by the month's first send")
      },
      {
        name: "media_downloads",
        account: "account_id",
        rows: Resource.uncounted("inbound files waiting to be fetched, made by WhatsApp's webhook, gone once fetched")
      },
      {
        name: "media_objects",
        account: undefined,
        rows: Resource.uncounted(
          "the PostgreSQL media store's files, written by the fetcher on its own schedule after WhatsApp's webhook, also for earlier fuzzed accounts: its account_id is left out, as webhook_attempts'"
        )
      },
      {
        name: "media_chunks",
        account: undefined,
        rows: Resource.uncounted(
          "the bytes of media_objects' files, 256 KiB a row, under an upload id, written as media_objects"
        )
      }
    ],
    ids: {
      field: "id",
      parameters: ["/api/v1/messages/{id} id", "/api/v1/messages/{id}/reactions id", "/api/v1/messages/{id}/media id"],
      make: async ({ target }, account) => {
        const made = await makeConversation(
          target,
          account.ownerKey,
          "Seeded",
          await existingWaId(target, account.ownerKey)
        )
        return (await readAt(`/api/v1/conversations/${made.conversation.id}/messages`)(target, account.ownerKey))
          .messages[0].id
      }
    }
  }
}

const mediaIdOf = async (target: Target, key: string) => {
  const made = await upload(target, key, pngFile())
  expect(made.status, made.text).toBe(201)
  return made.body.id as string
}

const uploadedMediaIsolation: Resource.Isolation = {
  noun: "media",
  make: ({ target }, key) => mediaIdOf(target, key),
  read: ({ target }, key, id) => readAt(`/api/v1/media/${id}`)(target, key),
  unknownId: () => neverIssued("med")
}

/** Files uploaded to be sent (docs/contract-messaging.md §5.9). */
export const media: Resource.Resource = {
  name: "media",
  routes: [
    {
      method: "POST",
      path: "/api/v1/media",
      needs: ["messages:send"],
      succeeds: 201,
      request: async () => ({ path: "/api/v1/media", form: formOf(pngFile()) })
    },
    {
      method: "GET",
      path: "/api/v1/media/{id}",
      needs: [...reads],
      succeeds: 200,
      addresses: (id) => ({ path: `/api/v1/media/${id}` }),
      request: Resource.aimedAt(uploadedMediaIsolation, (id) => ({ path: `/api/v1/media/${id}` }))
    }
  ],
  isolation: uploadedMediaIsolation,
  ledger: {
    tables: [
      {
        name: "uploaded_media",
        account: "account_id",
        rows: Resource.perOperation({ "POST /api/v1/media": 1 })
      },
      {
        name: "media_graph_uploads",
        account: "account_id",
        rows: Resource.uncounted("made by the sender when it first sends a file on a channel, not by an answer")
      }
    ],
    ids: {
      field: "id",
      parameters: ["/api/v1/media/{id} id"],
      make: async ({ target }, account) => mediaIdOf(target, account.ownerKey)
    }
  }
}
