// Package mcpauth authorizes Antler's MCP client at remote MCP servers as
// the MCP specification's authorization section defines it: the OAuth 2.1
// authorization code flow with PKCE, discovered from the server (protected
// resource metadata, RFC 9728; authorization server metadata, RFC 8414 and
// OpenID discovery), with the client registered by a client ID metadata
// document, pre-registration or dynamic client registration (RFC 7591),
// and the resource parameter (RFC 8707).
//
// The protocol itself is the official Go SDK's
// (github.com/modelcontextprotocol/go-sdk/auth.AuthorizationCodeHandler,
// built on golang.org/x/oauth2). This package adds what an agent harness
// needs around it:
//
//   - a [Store] of each user's tokens per server ([FileStore]: one 0600
//     file per user and server under the home);
//   - [Stored], the handler a running agent uses: it sends the stored
//     token, refreshes it before it expires and saves the new one, and
//     never starts an interactive flow; a server that asks for
//     authorization gets a [LoginRequiredError] naming the way to log in;
//   - [Begin], one interactive login ([Flow]): it returns the
//     authorization URL and stores the tokens once the redirect brings the
//     code back (the CLI's loopback listener, the gateway's callback
//     route);
//   - [Interactive], a handler that runs the whole flow inside a session,
//     for clients whose authorization server approves without a human (the
//     conformance suite).
//
// Tokens and client secrets never appear in logs or errors: [Record]
// masks them when formatted.
package mcpauth
