import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import { expect } from "vitest"
import { createChannel } from "../channels/ChannelsResource.ts"
import { call } from "../Http.ts"
import type { Target } from "../TestServer.ts"
import { nextWaId, postWebhook } from "./ConversationsResource.ts"

/** A customer's file (image, audio, video, document or sticker), as Meta delivers it. */
export interface InboundFile {
  readonly type: "image" | "audio" | "video" | "document" | "sticker"
  readonly mediaId: string
  readonly mimeType: string
  readonly sha256?: string | undefined
  readonly filename?: string | undefined
}

/** The webhook of one inbound file on `phoneNumberId`, signed by `postWebhook`. */
export const inboundFilePayload = (
  phoneNumberId: string,
  from: string,
  file: InboundFile,
  timestamp = new Date()
): Uint8Array =>
  MetaPayloads.messagesChangePayload(phoneNumberId, "16505551111", {
    contacts: [{ profile: { name: "Ada Customer" }, wa_id: from }],
    messages: [MetaPayloads.mediaMessage({ from, externalId: `wamid.${crypto.randomUUID()}`, timestamp, ...file })]
  })

/** The message's media once it left `pending` (stored or failed), read with `key`. */
export const settledMedia = async (target: Target, key: string, messageId: string, timeoutMs = 10_000) => {
  const until = Date.now() + timeoutMs
  while (true) {
    const read = await call(target, "GET", `/api/v1/messages/${messageId}`, { auth: key })
    expect(read.status, read.text).toBe(200)
    if (read.body.media?.state !== "pending" || Date.now() > until) return read.body.media
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/**
 * A customer sends `file` on a new channel of the key's account (or `channel`): the message's id,
 * once its media left `pending`.
 */
export const receiveFile = async (
  target: Target,
  key: string,
  file: InboundFile,
  options: {
    readonly channel?: { readonly id: string; readonly phone_number_id: string } | undefined
    /** How long the file may stay pending (10 s unless set). */
    readonly timeoutMs?: number | undefined
  } = {}
) => {
  const channel = options.channel ?? (await createChannel(target, key))
  const reply = await postWebhook(target, inboundFilePayload(channel.phone_number_id, nextWaId(), file))
  expect(reply.status).toBe(200)
  const list = await call(target, "GET", `/api/v1/conversations?channel_id=${channel.id}&limit=1`, { auth: key })
  expect(list.status, list.text).toBe(200)
  const thread = list.body.conversations[0] as { id: string }
  const messages = await call(target, "GET", `/api/v1/conversations/${thread.id}/messages?limit=1`, { auth: key })
  const messageId = messages.body.messages[0].id as string
  return { messageId, media: await settledMedia(target, key, messageId, options.timeoutMs), channel }
}

/** The simulator's file of an image: stored within a moment. */
export const simulatedImage = (): InboundFile => ({
  type: "image",
  mediaId: `sim-${crypto.randomUUID()}`,
  mimeType: "image/jpeg"
})
