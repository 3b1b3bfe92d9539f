package gateway

import "net/http"

// Auth. deerflow has one operator, and the API token is their login:
// every route here is already behind it, so there are no accounts,
// sessions or setup. Run DeerFlow's UI with DEER_FLOW_AUTH_DISABLED=1
// (it then uses its built-in user "default" and never asks), or let it
// ask: setup-status says setup is done and registration closed, and me
// answers the fixed local operator (Options.Operator, an admin), whatever
// cookie comes along: whoever got through the token check is the
// operator. There is no login, logout or registration flow.

// userJSON is DeerFlow's UserResponse (frontend core/auth/types.ts).
type userJSON struct {
	ID            string  `json:"id"`
	Email         string  `json:"email"`
	SystemRole    string  `json:"system_role"` // admin | user
	NeedsSetup    bool    `json:"needs_setup"`
	OAuthProvider *string `json:"oauth_provider"`
}

// setupStatus answers GET /api/v1/auth/setup-status.
func (g *Gateway) setupStatus(w http.ResponseWriter, r *http.Request) {
	reply(w, http.StatusOK, map[string]bool{"needs_setup": false, "registration_enabled": false})
}

// me answers GET /api/v1/auth/me: the operator.
func (g *Gateway) me(w http.ResponseWriter, r *http.Request) {
	reply(w, http.StatusOK, userJSON{ID: g.o.Operator, Email: g.o.OperatorEmail, SystemRole: "admin"})
}

// logout answers POST /api/v1/auth/logout: there is no session to end.
func (g *Gateway) logout(w http.ResponseWriter, r *http.Request) {
	reply(w, http.StatusOK, map[string]string{"message": "There are no sessions: the API token is the login."})
}
