import { useState } from "preact/hooks"
import { HttpApi } from "effect/http-api"
import { ConversationsApi } from "@leadline/http-adapter/conversations/ConversationsApi"
import { IdentityApi } from "@leadline/http-adapter/identity/IdentityApi"
import { routes } from "../api.ts"
import { touchesInbox, useEvents } from "../live.ts"
import type { Session } from "../session.ts"
import { choices, nameOf, type Team, type User } from "../team.ts"
import { Empty, ErrorText, Field, Loading, Page, Pager, useLoad } from "../ui.tsx"
import { Thread } from "./Thread.tsx"

/** The routes this page calls. */
const call = routes(HttpApi.make("dashboard").add(ConversationsApi).add(IdentityApi))

const STATUSES = ["open", "pending", "resolved", "snoozed"] as const
type Status = (typeof STATUSES)[number]

/** "anyone", "none" (unassigned) or a user id: the list's `assigned_user_id`. */
type Assignee = string

/** A short time for a list row: the hour today, else the date. */
const shortWhen = (iso: string) => {
  const at = new Date(iso)
  return at.toDateString() === new Date().toDateString()
    ? at.toLocaleTimeString(undefined, { timeStyle: "short" })
    : at.toLocaleDateString(undefined, { dateStyle: "medium" })
}

/**
 * The inbox: conversations, newest activity first, each named by its lead with the last message
 * and the unread count; filtered by status and by assignee (any user of the account, from
 * `GET /api/users`); one opens beside the list. It reloads on
 * the account's conversation and message events (`live.ts`), and on Refresh.
 */
export const Conversations = (props: { session: Extract<Session, { kind: "account" }> }) => {
  const token = props.session.token
  const [offset, setOffset] = useState(0)
  const [status, setStatus] = useState<Status | "all">("all")
  const [assignee, setAssignee] = useState<Assignee>("anyone")
  // `?open=cv_…` (a lead's page links here) opens that conversation.
  const [open, setOpen] = useState<string | undefined>(
    () => new URLSearchParams(location.search).get("open") ?? undefined
  )
  const me = useLoad(() => call(token, (client) => client.identity.me()), [token])
  // Every user of the account, to assign to and filter by: read 100 at a time, the most a page holds.
  const users = useLoad(async () => {
    const all: Array<User> = []
    for (let offset: number | null = 0; offset !== null; ) {
      const from: number = offset
      const page = await call(token, (client) => client.identity.users({ query: { limit: 100, offset: from } }))
      all.push(...page.users)
      offset = page.meta.next_offset
    }
    return all
  }, [token])
  const account = me.data?.account
  const team: Team = {
    me: account?.user_id,
    // Without the list (a refusal shown below), the signed-in user can still take a conversation.
    users: users.data ?? (account === undefined ? [] : [{ id: account.user_id, role: account.role }])
  }
  const list = useLoad(
    () =>
      call(token, (client) =>
        client.conversations.list({
          query: {
            offset,
            ...(status === "all" ? {} : { status }),
            ...(assignee === "anyone" ? {} : { assigned_user_id: assignee })
          }
        })
      ),
    [token, offset, status, assignee]
  )
  useEvents((event) => {
    if (touchesInbox(event)) list.reload()
  })
  const rows = list.data?.conversations ?? []
  return (
    <Page
      title="Conversations"
      actions={
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      }
    >
      <div class="filters">
        <Field label="Status">
          <select
            value={status}
            onChange={(event) => {
              setStatus(event.currentTarget.value as Status | "all")
              setOffset(0)
            }}
          >
            <option value="all">All</option>
            {STATUSES.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Assignee">
          <select
            value={assignee}
            onChange={(event) => {
              setAssignee(event.currentTarget.value)
              setOffset(0)
            }}
          >
            <option value="anyone">Anyone</option>
            <option value="none">Unassigned</option>
            {choices(team).map((user) => (
              <option key={user.id} value={user.id}>
                {user.name}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <ErrorText error={users.error} />
      <div class={open === undefined ? "inbox" : "inbox with-thread"}>
        <div class="inbox-list">
          {list.loading && list.data === undefined ? <Loading what="conversations" /> : null}
          <ErrorText error={list.error} />
          {list.data === undefined ? null : rows.length === 0 ? (
            <Empty>
              {status === "all" && assignee === "anyone"
                ? "No conversations yet: they start when a customer writes to one of your WhatsApp channels."
                : "No conversations match these filters."}
            </Empty>
          ) : (
            <>
              <ul class="conversations" aria-label="Conversations">
                {rows.map((row) => (
                  <li key={row.id} class={row.id === open ? "selected" : undefined}>
                    <button
                      type="button"
                      class="conversation-row"
                      aria-current={row.id === open ? "true" : undefined}
                      onClick={() => setOpen(row.id)}
                    >
                      <span class="who">
                        <strong>{row.lead.name === "" ? row.lead.phone : row.lead.name}</strong>
                        <span class="muted">{row.lead.phone}</span>
                      </span>
                      <span class="when muted">
                        {shortWhen(row.last_message?.created_at ?? row.last_message_at ?? row.created_at)}
                      </span>
                      <span class="preview">
                        {row.last_message === null
                          ? "No messages"
                          : `${row.last_message.direction === "outbound" ? "You: " : ""}${row.last_message.text}`}
                      </span>
                      <span class="tags">
                        <span class={`chip status-${row.status}`}>{row.status}</span>
                        {row.assigned_user_id === null ? null : (
                          <span class="chip">
                            {row.assigned_user_id === team.me
                              ? "assigned to me"
                              : `assigned to ${nameOf(team, row.assigned_user_id)}`}
                          </span>
                        )}
                        {row.unread_count === 0 ? null : (
                          <span class="unread">
                            {row.unread_count}
                            <span class="visually-hidden"> unread</span>
                          </span>
                        )}
                      </span>
                    </button>
                  </li>
                ))}
              </ul>
              <Pager meta={list.data.meta} onOffset={setOffset} noun="conversations" />
            </>
          )}
        </div>
        {open === undefined ? null : (
          <Thread
            key={open}
            token={token}
            id={open}
            team={team}
            onChanged={list.reload}
            onClose={() => setOpen(undefined)}
          />
        )}
      </div>
    </Page>
  )
}
