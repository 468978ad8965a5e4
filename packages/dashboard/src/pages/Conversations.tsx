import { useState } from "preact/hooks"
import { call, idempotencyKey } from "../api.ts"
import type { Session } from "../session.ts"
import { Empty, ErrorText, Field, Form, Listing, Loading, Page, Submit, useAction, useLoad, when } from "../ui.tsx"

/** Conversations, newest activity first; open one to read its messages and send a reply. */
export const Conversations = (props: { session: Extract<Session, { kind: "account" }> }) => {
  const token = props.session.token
  const [offset, setOffset] = useState(0)
  const [open, setOpen] = useState<string | undefined>(undefined)
  const list = useLoad(() => call(token, (client) => client.conversations.list({ query: { offset } })), [token, offset])
  return (
    <Page title="Conversations">
      {open === undefined ? null : <Thread token={token} id={open} onClose={() => setOpen(undefined)} />}
      <Listing
        loaded={list}
        rows={(data) => data.conversations}
        caption="Conversations"
        noun="conversations"
        empty="No conversations yet: they start when a customer writes to one of your WhatsApp channels."
        onOffset={setOffset}
        rowKey={(row) => row.id}
        columns={[
          { label: "Lead", cell: (row) => <code>{row.lead_id}</code> },
          { label: "Status", cell: (row) => row.status },
          { label: "Last message", cell: (row) => when(row.last_message_at) },
          { label: "Window closes", cell: (row) => when(row.service_window_expires_at) },
          {
            label: "Actions",
            cell: (row) => (
              <button type="button" onClick={() => setOpen(row.id)}>
                Open
              </button>
            )
          }
        ]}
      />
    </Page>
  )
}

const Thread = (props: { token: string; id: string; onClose: () => void }) => {
  const { token, id } = props
  const messages = useLoad(
    () => call(token, (client) => client.conversations.messages({ params: { id }, query: {} })),
    [token, id]
  )
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
    messages.reload()
  })
  return (
    <section class="panel" aria-label="Conversation">
      <header class="page-header">
        <h2>Conversation {id}</h2>
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </header>
      {messages.loading && messages.data === undefined ? <Loading what="messages" /> : null}
      <ErrorText error={messages.error} />
      {messages.data === undefined ? null : messages.data.messages.length === 0 ? (
        <Empty>No messages.</Empty>
      ) : (
        <ol class="thread">
          {[...messages.data.messages].reverse().map((message) => (
            <li key={message.id} class={`bubble ${message.direction}`}>
              <span>{message.text ?? (message.template === null ? "(media)" : "(template)")}</span>
              <small class="muted">
                {message.sender_type} · {message.status} · {when(message.created_at)}
              </small>
            </li>
          ))}
        </ol>
      )}
      <Form label="Send a reply" onSubmit={() => void send.act()}>
        <Field label="Reply">
          <textarea required maxLength={4096} value={text} onInput={(event) => setText(event.currentTarget.value)} />
        </Field>
        <ErrorText error={send.error} />
        <Submit busy={send.busy}>Send</Submit>
      </Form>
    </section>
  )
}
