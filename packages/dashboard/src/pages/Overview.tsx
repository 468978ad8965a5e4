import { HttpApi } from "effect/http-api"
import { IdentityApi } from "@leadline/http-adapter/identity/IdentityApi"
import { routes } from "../api.ts"
import type { Session } from "../session.ts"
import { ErrorText, Loading, Page, useLoad } from "../ui.tsx"

/** The routes this page calls. */
const call = routes(HttpApi.make("dashboard").add(IdentityApi))

/** Usage against the plan's limit, and what the signed-in key is. */
export const Overview = (props: { session: Extract<Session, { kind: "account" }> }) => {
  const usage = useLoad(() => call(props.session.token, (client) => client.identity.usage()), [props.session.token])
  const me = useLoad(() => call(props.session.token, (client) => client.identity.me()), [props.session.token])
  return (
    <Page title="Overview">
      <h2>Usage this month</h2>
      {usage.loading && usage.data === undefined ? <Loading what="usage" /> : null}
      <ErrorText error={usage.error} />
      {usage.data === undefined ? null : (
        <div class="usage">
          <p>
            <strong data-testid="messages-used">{usage.data.usage.messages_used}</strong> of{" "}
            <strong data-testid="messages-limit">{usage.data.usage.messages_limit}</strong> messages sent on the{" "}
            <strong>{usage.data.subscription.plan_id}</strong> plan ({usage.data.subscription.status}).
          </p>
          <meter
            aria-label="Messages used of the plan's limit"
            min={0}
            max={usage.data.usage.messages_limit}
            value={usage.data.usage.messages_used}
          />
        </div>
      )}
      <h2>This key</h2>
      <ErrorText error={me.error} />
      {me.data === undefined ? null : (
        <dl class="facts">
          <dt>User</dt>
          <dd>
            <code>{me.data.account.user_id}</code> ({me.data.account.role})
          </dd>
          <dt>Scopes</dt>
          <dd>{me.data.scopes.length === 0 ? "full access" : me.data.scopes.join(", ")}</dd>
          <dt>Permissions</dt>
          <dd>{me.data.permissions.join(", ")}</dd>
        </dl>
      )}
    </Page>
  )
}
