import { useEffect, useState } from "preact/hooks"
import { Link, navigate, usePath } from "./router.tsx"
import * as Sessions from "./session.ts"
import type { Session } from "./session.ts"
import { SignIn } from "./pages/SignIn.tsx"
import { Overview } from "./pages/Overview.tsx"
import { Keys } from "./pages/Keys.tsx"
import { Webhooks } from "./pages/Webhooks.tsx"
import { Leads } from "./pages/Leads.tsx"
import { Conversations } from "./pages/Conversations.tsx"
import { Campaigns } from "./pages/Campaigns.tsx"
import { Orders } from "./pages/Orders.tsx"
import { Products } from "./pages/Products.tsx"
import { Knowledge } from "./pages/Knowledge.tsx"
import { Agents } from "./pages/Agents.tsx"
import { Analytics } from "./pages/Analytics.tsx"
import { Operator } from "./pages/Operator.tsx"

type AccountSession = Extract<Session, { kind: "account" }>

const ACCOUNT_PAGES: ReadonlyArray<{
  path: string
  label: string
  page: (props: { session: AccountSession; signOut: () => void }) => preact.JSX.Element
}> = [
  { path: "/", label: "Overview", page: Overview },
  { path: "/keys", label: "API keys", page: Keys },
  { path: "/webhooks", label: "Webhooks", page: Webhooks },
  { path: "/leads", label: "Leads", page: Leads },
  { path: "/conversations", label: "Conversations", page: Conversations },
  { path: "/campaigns", label: "Campaigns", page: Campaigns },
  { path: "/orders", label: "Orders", page: Orders },
  { path: "/products", label: "Products", page: Products },
  { path: "/knowledge", label: "Knowledge", page: Knowledge },
  { path: "/agents", label: "Agents", page: Agents },
  { path: "/analytics", label: "Analytics", page: Analytics }
]

const Shell = (props: {
  who: string
  nav: ReadonlyArray<{ path: string; label: string }>
  path: string
  signOut: () => void
  children: preact.ComponentChildren
}) => {
  // A new page moves the focus to its heading, as a page load would for a screen reader.
  useEffect(() => document.getElementById("page-title")?.focus(), [props.path])
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand">Leadline</span>
        <span class="who">{props.who}</span>
        <button type="button" class="link" onClick={props.signOut}>
          Sign out
        </button>
      </header>
      <nav class="sidenav" aria-label="Sections">
        <ul>
          {props.nav.map((item) => (
            <li key={item.path}>
              <Link href={item.path} current={item.path === props.path}>
                {item.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main">{props.children}</main>
    </div>
  )
}

export const App = () => {
  const [session, setSession] = useState<Session | undefined>(Sessions.load)
  const path = usePath()
  const signIn = (next: Session) => {
    Sessions.save(next)
    setSession(next)
    navigate(next.kind === "operator" ? "/operator" : "/")
  }
  const signOut = () => {
    Sessions.clear()
    setSession(undefined)
    navigate("/")
  }
  if (session === undefined) return <SignIn onSignIn={signIn} />
  if (session.kind === "operator")
    return (
      <Shell who="Operator" nav={[{ path: "/operator", label: "Accounts" }]} path={path} signOut={signOut}>
        <Operator session={session} />
      </Shell>
    )
  const found = ACCOUNT_PAGES.find((page) => page.path === path)
  const Current = found?.page ?? NotFound
  return (
    <Shell who={`Signed in as the ${session.role}`} nav={ACCOUNT_PAGES} path={path} signOut={signOut}>
      <Current session={session} signOut={signOut} />
    </Shell>
  )
}

const NotFound = () => (
  <section class="page">
    <h1 id="page-title" tabIndex={-1}>
      Not found
    </h1>
    <p>
      There is no such page. <Link href="/">Back to the overview</Link>.
    </p>
  </section>
)
