import { useState } from "preact/hooks"
import { HttpApi } from "effect/http-api"
import { AdminApi } from "@leadline/http-adapter/admin/AdminApi"
import { IdentityApi } from "@leadline/http-adapter/identity/IdentityApi"
import { routes } from "../api.ts"
import type { Session } from "../session.ts"
import { ErrorText, Field, Form, Submit, useAction } from "../ui.tsx"

/** The routes this page calls. */
const call = routes(HttpApi.make("dashboard").add(AdminApi).add(IdentityApi))

/**
 * An account owner signs in with a full-access API key (the pages manage keys and webhooks,
 * which only such a key may); the operator with the admin token. Nothing is kept but the
 * token, in this tab's sessionStorage.
 */
export const SignIn = (props: { onSignIn: (session: Session) => void }) => {
  const [kind, setKind] = useState<Session["kind"]>("account")
  const [token, setToken] = useState("")
  const { act, busy, error } = useAction(async () => {
    const value = token.trim()
    if (kind === "operator") {
      await call(value, (client) => client.admin.listAccounts({ query: { limit: 1 } }))
      props.onSignIn({ kind: "operator", token: value })
      return
    }
    const me = await call(value, (client) => client.identity.me())
    if (me.scopes.length > 0)
      throw new Error(
        `This key is limited to ${me.scopes.join(", ")}: the dashboard needs a full-access key (one with no scopes).`
      )
    props.onSignIn({ kind: "account", token: value, role: me.account.role })
  })
  return (
    <main id="main" class="signin">
      <h1 id="page-title">Sign in to Leadline</h1>
      <Form label="Sign in" onSubmit={() => void act()}>
        <fieldset>
          <legend>Sign in as</legend>
          <label class="choice">
            <input type="radio" name="kind" checked={kind === "account"} onChange={() => setKind("account")} />
            Account owner (a full-access API key)
          </label>
          <label class="choice">
            <input type="radio" name="kind" checked={kind === "operator"} onChange={() => setKind("operator")} />
            Operator (the admin token)
          </label>
        </fieldset>
        <Field
          label={kind === "account" ? "API key" : "Admin token"}
          hint="Kept in this tab only, and sent to this server only."
        >
          <input
            type="password"
            autocomplete="off"
            required
            value={token}
            onInput={(event) => setToken(event.currentTarget.value)}
          />
        </Field>
        <ErrorText error={error} />
        <Submit busy={busy}>Sign in</Submit>
      </Form>
    </main>
  )
}
