import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks"
import type { Message } from "@leadline/core/messages/Message"
import { HttpApi } from "effect/http-api"
import { ConversationsApi } from "@leadline/http-adapter/conversations/ConversationsApi"
import { TemplatesApi } from "@leadline/http-adapter/templates/TemplatesApi"
import { type ApiError, fetchBlob, idempotencyKey, routes } from "../api.ts"
import { Linked, Outward } from "../links.tsx"
import { touchesInbox, useEvents } from "../live.ts"
import { Link } from "../router.tsx"
import { choices, nameOf, type Team } from "../team.ts"
import { asApiError, Empty, ErrorText, Field, Form, Loading, Submit, useAction, useLoad, when } from "../ui.tsx"

/** The routes this page calls. */
const call = routes(HttpApi.make("dashboard").add(ConversationsApi).add(TemplatesApi))

/** An outbound message's status as WhatsApp-style ticks, with its name for screen readers. */
const TICKS: Record<string, { mark: string; label: string }> = {
  queued: { mark: "○", label: "queued" },
  sent: { mark: "✓", label: "sent" },
  delivered: { mark: "✓✓", label: "delivered" },
  read: { mark: "✓✓", label: "read" },
  failed: { mark: "!", label: "failed" },
  cancelled: { mark: "×", label: "cancelled" }
}

const Ticks = (props: { status: string }) => {
  const tick = TICKS[props.status]
  if (tick === undefined) return null
  return (
    <span class={`ticks ticks-${props.status}`} title={tick.label}>
      <span aria-hidden="true">{tick.mark}</span>
      <span class="visually-hidden">{tick.label}</span>
    </span>
  )
}

/**
 * An inbound image, drawn on a canvas: the file needs the session's Bearer header, and the page's
 * policy (`default-src 'self'`) admits no `blob:` or `data:` image, which a canvas does not need.
 */
const InlineImage = (props: { token: string; messageId: string; label: string }) => {
  const canvas = useRef<HTMLCanvasElement>(null)
  const [failed, setFailed] = useState<string | undefined>(undefined)
  useEffect(() => {
    let live = true
    fetchBlob(props.token, `/api/v1/messages/${props.messageId}/media`)
      .then((blob) => createImageBitmap(blob))
      .then((bitmap) => {
        const target = canvas.current
        if (!live || target === null) return
        const scale = Math.min(1, 280 / bitmap.width)
        target.width = Math.round(bitmap.width * scale)
        target.height = Math.round(bitmap.height * scale)
        target.getContext("2d")?.drawImage(bitmap, 0, 0, target.width, target.height)
      })
      .catch((error: unknown) => live && setFailed(error instanceof Error ? error.message : String(error)))
    return () => {
      live = false
    }
  }, [props.token, props.messageId])
  return failed === undefined ? (
    <canvas ref={canvas} class="inline-image" role="img" aria-label={props.label} width={1} height={1} />
  ) : (
    <span class="muted">
      {props.label} ({failed})
    </span>
  )
}

/** A file to download: fetched with the Bearer header, then saved under its name. */
const FileLink = (props: { token: string; messageId: string; filename: string }) => {
  const download = useAction(async () => {
    const blob = await fetchBlob(props.token, `/api/v1/messages/${props.messageId}/media`)
    const url = URL.createObjectURL(blob)
    const anchor = document.createElement("a")
    anchor.href = url
    anchor.download = props.filename
    anchor.click()
    setTimeout(() => URL.revokeObjectURL(url), 10_000)
  })
  return (
    <>
      <button type="button" class="link file" onClick={() => void download.act()} disabled={download.busy}>
        Download {props.filename}
      </button>
      <ErrorText error={download.error} />
    </>
  )
}

const TYPE_NAMES: Record<string, string> = {
  image: "Image",
  video: "Video",
  audio: "Audio",
  voice: "Voice message",
  document: "Document",
  sticker: "Sticker"
}

/** What a message shows: its file (an image inline, any other as a link), then its text. */
const Body = (props: { token: string; message: Message }) => {
  const { message } = props
  const media = message.media
  const kind = TYPE_NAMES[message.type] ?? message.type
  let file: preact.JSX.Element | null = null
  if (media !== null && "provider_media_id" in media) {
    const name = media.filename ?? `${kind.toLowerCase()}${media.mime_type === null ? "" : ` (${media.mime_type})`}`
    file =
      media.state !== "stored" ? (
        <span class="muted">
          {kind}: {media.state === "pending" ? "being fetched from WhatsApp" : `not kept (${media.reason ?? "failed"})`}
        </span>
      ) : message.type === "image" || message.type === "sticker" ? (
        <InlineImage token={props.token} messageId={message.id} label={message.text ?? kind} />
      ) : (
        <FileLink token={props.token} messageId={message.id} filename={name} />
      )
  } else if (media !== null && "media_id" in media) {
    // Our own file: WhatsApp has it; the page names it (only inbound files are served back).
    file =
      media.link === null ? (
        <span class="muted">
          {kind}
          {media.filename === null ? "" : `: ${media.filename}`}
        </span>
      ) : (
        <Outward href={media.link}>
          {kind}
          {media.filename === null ? "" : `: ${media.filename}`}
        </Outward>
      )
  }
  const template = message.template as { name?: unknown } | null
  const text =
    message.text ??
    (template !== null && typeof template.name === "string"
      ? `Template ${template.name}`
      : file === null
        ? `(${kind})`
        : null)
  return (
    <>
      {file}
      {text === null ? null : (
        <span class="text">
          <Linked text={text} />
        </span>
      )}
    </>
  )
}

/** A template to send when the 24-hour window is closed: the approved ones, or a name typed. */
const TemplatePicker = (props: { token: string; id: string; onSent: () => void }) => {
  const { token } = props
  const templates = useLoad(() => call(token, (client) => client.templates.list({ query: {} })), [token])
  const approved = (templates.data?.templates ?? []).filter((t) => t.status === "APPROVED")
  const [picked, setPicked] = useState("")
  const [name, setName] = useState("hello_world")
  const [language, setLanguage] = useState("en_US")
  const [formKey, setFormKey] = useState(idempotencyKey)
  const send = useAction(async () => {
    const chosen = approved.find((t) => t.id === picked) ?? approved[0]
    const template = chosen === undefined ? { name: name.trim(), language: language.trim() } : chosen
    await call(token, (client) =>
      client.conversations.send({
        params: { id: props.id },
        payload: { type: "template", template: { name: template.name, language: template.language } },
        headers: { "idempotency-key": formKey }
      })
    )
    setFormKey(idempotencyKey())
    props.onSent()
  })
  return (
    <Form label="Send a template" onSubmit={() => void send.act()}>
      <p class="muted">
        The customer has not written in the last 24 hours: WhatsApp takes only an approved template until they do.
      </p>
      {templates.loading && templates.data === undefined ? <Loading what="templates" /> : null}
      {approved.length > 0 ? (
        <Field label="Template">
          <select value={picked} onChange={(event) => setPicked(event.currentTarget.value)}>
            {approved.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name} ({t.language}, {t.category.toLowerCase()})
              </option>
            ))}
          </select>
        </Field>
      ) : (
        <>
          <Field label="Template name" hint="No approved template is synced: name one WhatsApp has approved.">
            <input required value={name} onInput={(event) => setName(event.currentTarget.value)} />
          </Field>
          <Field label="Template language">
            <input required value={language} onInput={(event) => setLanguage(event.currentTarget.value)} />
          </Field>
        </>
      )}
      <ErrorText error={send.error} />
      <Submit busy={send.busy}>Send template</Submit>
    </Form>
  )
}

/** A conversation's messages, newest first, as far back as they have been read. */
interface Loaded {
  readonly messages: ReadonlyArray<Message>
  /** How many the conversation has in all, from the newest page's `meta.total`. */
  readonly total: number
}

/**
 * The newest page read again, put in front of what was shown. A message that left the newest page
 * as new ones came stays shown (nothing vanishes from under the reader); if more arrived at once
 * than a page holds (the two have nothing in common), only the newest page is kept, so no gap is
 * left unseen between it and the older ones.
 */
const withNewest = (
  shown: Loaded | undefined,
  page: { readonly messages: ReadonlyArray<Message>; readonly meta: { readonly total: number } }
): Loaded => {
  const ids = new Set(page.messages.map((message) => message.id))
  const before = shown?.messages ?? []
  const overlaps = before.length === 0 || before.some((message) => ids.has(message.id))
  return {
    messages: overlaps ? [...page.messages, ...before.filter((message) => !ids.has(message.id))] : page.messages,
    total: page.meta.total
  }
}

/**
 * The thread's messages: the newest page, read again on each event of the conversation, and the
 * older pages "Load older" adds (`before` the oldest shown, so the pages do not shift as messages
 * arrive).
 */
const useMessages = (token: string, id: string) => {
  const [loaded, setLoaded] = useState<Loaded | undefined>(undefined)
  const [error, setError] = useState<ApiError | undefined>(undefined)
  const [round, setRound] = useState(0)
  useEffect(() => {
    let live = true
    call(token, (client) => client.conversations.messages({ params: { id }, query: {} })).then(
      (page) => {
        if (!live) return
        setError(undefined)
        setLoaded((shown) => withNewest(shown, page))
      },
      (failure) => live && setError(asApiError(failure))
    )
    return () => {
      live = false
    }
  }, [token, id, round])
  const loadOlder = useAction(async () => {
    const oldest = loaded?.messages[loaded.messages.length - 1]
    if (oldest === undefined) return
    const page = await call(token, (client) =>
      client.conversations.messages({ params: { id }, query: { before: oldest.id } })
    )
    setLoaded((shown) => {
      // Cut back to the newest page meanwhile: this page no longer follows what is shown.
      if (shown === undefined || shown.messages[shown.messages.length - 1]?.id !== oldest.id) return shown
      const known = new Set(shown.messages.map((message) => message.id))
      return { ...shown, messages: [...shown.messages, ...page.messages.filter((message) => !known.has(message.id))] }
    })
  })
  return { loaded, error, reload: () => setRound((n) => n + 1), loadOlder }
}

/**
 * The thread's scroll box: at the newest message when opened and as messages arrive while the
 * reader is there; where the reader left it otherwise; and when older messages come in above, the
 * message that was at the top stays where it was.
 */
const useThreadScroll = (loaded: Loaded | undefined) => {
  const box = useRef<HTMLDivElement>(null)
  const atEnd = useRef(true)
  const keep = useRef<{ readonly height: number; readonly top: number } | undefined>(undefined)
  useLayoutEffect(() => {
    const element = box.current
    if (element === null) return
    const kept = keep.current
    keep.current = undefined
    if (kept !== undefined) element.scrollTop = kept.top + (element.scrollHeight - kept.height)
    else if (atEnd.current) element.scrollTop = element.scrollHeight
  }, [loaded])
  return {
    box,
    onScroll: () => {
      const element = box.current
      if (element !== null) atEnd.current = element.scrollHeight - element.scrollTop - element.clientHeight < 24
    },
    /** Called before older messages are added at the top. */
    holdPlace: () => {
      const element = box.current
      if (element !== null) keep.current = { height: element.scrollHeight, top: element.scrollTop }
    }
  }
}

/** Assigns the conversation to any user of the account, or to no one. */
const AssignForm = (props: {
  team: Team
  assigned: string | null
  busy: boolean
  onAssign: (userId: string | null) => void
}) => {
  const [picked, setPicked] = useState(props.assigned ?? "")
  useEffect(() => setPicked(props.assigned ?? ""), [props.assigned])
  return (
    <Form label="Assign" class="assign" onSubmit={() => props.onAssign(picked === "" ? null : picked)}>
      <Field label="Assign to">
        <select value={picked} onChange={(event) => setPicked(event.currentTarget.value)}>
          <option value="">No one</option>
          {choices(props.team).map((user) => (
            <option key={user.id} value={user.id}>
              {user.name}
            </option>
          ))}
        </select>
      </Field>
      <Submit busy={props.busy}>Assign</Submit>
    </Form>
  )
}

/**
 * One conversation: its lead, its messages oldest first with their ticks and files (the newest
 * page, and older ones on demand), the actions (assign to anyone of the account, resolve, reopen)
 * and the reply, or a template once the 24-hour window has closed. Opening it marks it read, as
 * WhatsApp's own apps do.
 */
export const Thread = (props: {
  token: string
  id: string
  team: Team
  onChanged: () => void
  onClose: () => void
}) => {
  const { token, id, team } = props
  const conversation = useLoad(() => call(token, (client) => client.conversations.get({ params: { id } })), [token, id])
  const messages = useMessages(token, id)
  const { loaded, loadOlder } = messages
  // Oldest first, as a chat reads.
  const shown = useMemo(() => (loaded === undefined ? undefined : [...loaded.messages].reverse()), [loaded])
  const scroll = useThreadScroll(loaded)
  const markRead = useAction(async () => {
    await call(token, (client) => client.conversations.read({ params: { id } }))
    props.onChanged()
  })
  const panel = useRef<HTMLElement>(null)
  // On a phone the thread opens below the list: bring it into view.
  useEffect(() => {
    if (matchMedia("(max-width: 900px)").matches) panel.current?.scrollIntoView({ block: "start" })
  }, [id])
  const unread = conversation.data?.unread_count ?? 0
  useEffect(() => {
    if (unread > 0) void markRead.act()
  }, [unread])
  useEvents((event) => {
    if (touchesInbox(event) && (event.data.id === id || event.data.conversation_id === id)) {
      conversation.reload()
      messages.reload()
    }
  })
  const reloadAll = () => {
    conversation.reload()
    messages.reload()
    props.onChanged()
  }
  const change = useAction(async (payload: { status?: "open" | "resolved"; assigned_user_id?: string | null }) => {
    await call(token, (client) => client.conversations.update({ params: { id }, payload }))
    reloadAll()
  })
  const [text, setText] = useState("")
  const [formKey, setFormKey] = useState(idempotencyKey)
  const send = useAction(async () => {
    await call(token, (client) =>
      client.conversations.send({
        params: { id },
        payload: { type: "text", text: text.trim() },
        headers: { "idempotency-key": formKey }
      })
    )
    setText("")
    setFormKey(idempotencyKey())
    reloadAll()
  })
  const c = conversation.data
  const windowOpen = c?.service_window_expires_at != null && Date.parse(c.service_window_expires_at) > Date.now()
  const title = c === undefined ? "Conversation" : c.lead.name === "" ? c.lead.phone : c.lead.name
  return (
    <section ref={panel} class="panel thread-panel" aria-label="Conversation">
      <header class="thread-header">
        <div>
          <h2>{title}</h2>
          {c === undefined ? null : (
            <p class="muted">
              {c.lead.phone} · {c.status}
              {c.assigned_user_id === null
                ? " · unassigned"
                : c.assigned_user_id === team.me
                  ? " · assigned to me"
                  : ` · assigned to ${nameOf(team, c.assigned_user_id)}`}
              {" · "}
              <Link href={`/leads/${c.lead_id}`}>Lead details</Link>
            </p>
          )}
        </div>
        <div class="actions">
          {c === undefined ? null : (
            <>
              {team.me === undefined || c.assigned_user_id === team.me ? null : (
                <button
                  type="button"
                  disabled={change.busy}
                  onClick={() => void change.act({ assigned_user_id: team.me! })}
                >
                  Assign to me
                </button>
              )}
              {c.assigned_user_id === null ? null : (
                <button
                  type="button"
                  disabled={change.busy}
                  onClick={() => void change.act({ assigned_user_id: null })}
                >
                  Unassign
                </button>
              )}
              {c.status === "resolved" ? (
                <button type="button" disabled={change.busy} onClick={() => void change.act({ status: "open" })}>
                  Reopen
                </button>
              ) : (
                <button type="button" disabled={change.busy} onClick={() => void change.act({ status: "resolved" })}>
                  Resolve
                </button>
              )}
            </>
          )}
          <button type="button" onClick={props.onClose}>
            Close
          </button>
        </div>
      </header>
      {c === undefined ? null : (
        <AssignForm
          team={team}
          assigned={c.assigned_user_id}
          busy={change.busy}
          onAssign={(userId) => void change.act({ assigned_user_id: userId })}
        />
      )}
      <ErrorText error={conversation.error} />
      <ErrorText error={change.error} />
      <ErrorText error={markRead.error} />
      {loaded === undefined && messages.error === undefined ? <Loading what="messages" /> : null}
      <ErrorText error={messages.error} />
      {loaded === undefined || shown === undefined ? null : loaded.total === 0 ? (
        <Empty>No messages.</Empty>
      ) : (
        <div class="thread-scroll" ref={scroll.box} onScroll={scroll.onScroll}>
          {shown.length < loaded.total ? (
            <div class="older">
              <button
                type="button"
                disabled={loadOlder.busy}
                onClick={() => {
                  scroll.holdPlace()
                  void loadOlder.act()
                }}
              >
                {loadOlder.busy ? "Loading…" : "Load older messages"}
              </button>
              <span class="muted">
                {shown.length} of {loaded.total} shown
              </span>
              <ErrorText error={loadOlder.error} />
            </div>
          ) : (
            <p class="older muted">The start of the conversation.</p>
          )}
          <ol class="thread" aria-label="Messages">
            {shown.map((message) => (
              <li key={message.id} class={`bubble ${message.direction}`}>
                <Body token={token} message={message} />
                <small class="muted">
                  {message.direction === "outbound" ? `${message.sender_type} · ` : ""}
                  {when(message.created_at)}
                  {message.direction === "outbound" ? <Ticks status={message.status} /> : null}
                </small>
                {message.error === null ? null : <small class="error">{message.error.message}</small>}
              </li>
            ))}
          </ol>
        </div>
      )}
      {c === undefined ? null : windowOpen ? (
        <Form label="Send a reply" onSubmit={() => void send.act()}>
          <Field label="Reply">
            <textarea required maxLength={4096} value={text} onInput={(event) => setText(event.currentTarget.value)} />
          </Field>
          <ErrorText error={send.error} />
          <Submit busy={send.busy}>Send</Submit>
        </Form>
      ) : (
        <TemplatePicker token={token} id={id} onSent={reloadAll} />
      )}
    </section>
  )
}
