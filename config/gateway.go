package config

// Gateway is Antler's own gateway section (`antler serve`). DeerFlow has
// no such section; its gateway authenticates with its own user database.
//
//	gateway:
//	  tokens:
//	    - token: $ANTLER_TOKEN_ALICE
//	      user_id: alice
//	      admin: true
//	    - token: $ANTLER_TOKEN_BOB
//	      user_id: bob
//	      role: guest
type Gateway struct {
	// Tokens map bearer tokens to users. None means the gateway serves one
	// default user and listens on loopback only.
	Tokens []GatewayToken `yaml:"tokens"`
	// CORSOrigins are browser origins (such as the frontend's
	// "http://localhost:3000") allowed to call the gateway from another
	// origin; none means same-origin only. The GATEWAY_CORS_ORIGINS
	// environment variable (comma-separated, DeerFlow's) adds to it.
	CORSOrigins []string `yaml:"cors_origins"`
	// ElicitationTimeoutSeconds bounds how long a run waits for the
	// human's answer to an MCP server's question, shown in the web
	// frontend as a clarification card; the server then gets "cancel".
	// 0 means 300; negative is refused.
	ElicitationTimeoutSeconds int `yaml:"elicitation_timeout_seconds"`
}

// GatewayToken is one entry of gateway.tokens.
type GatewayToken struct {
	// Token is the bearer token (usually a $VAR).
	Token string `yaml:"token"`
	// UserID is the user the token authenticates.
	UserID string `yaml:"user_id"`
	// Admin may manage process-wide settings (MCP servers, public skills).
	// It is the role "admin": with a role other than "admin" it is a load
	// error.
	Admin bool `yaml:"admin"`
	// Role is the user's authorization role (the runtime context's
	// user_role, authorization's roles); "" means "admin" for an admin
	// entry, else authorization.default_role. Role "admin" is an admin.
	Role string `yaml:"role"`
}
