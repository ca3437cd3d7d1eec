package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/toolport/toolport/internal/pack/music"
	"github.com/toolport/toolport/tidal"
)

const tidalUsage = "toolport tidal login [--timeout 5m] | status"

func runTidal(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(env.Stderr, "Usage: %s\n\n"+
			"Logs in to your TIDAL account, for savePlaylistToTidal and 'toolport library sync'.\n\n"+
			"  toolport tidal login    opens TIDAL's login (OAuth 2 authorization code with PKCE) and waits\n"+
			"                          for its redirect on TIDAL_REDIRECT_URI (default %s,\n"+
			"                          which must be registered for your app in TIDAL's developer dashboard)\n"+
			"  toolport tidal status   says whether a login is saved and until when its access token runs\n\n"+
			"The app is TIDAL_CLIENT_ID (TIDAL_CLIENT_SECRET is optional here). The login is kept in\n"+
			"TIDAL_TOKEN_FILE (default ~/.config/toolport/tidal-login.json), mode 0600, and refreshed when it expires.\n",
			tidalUsage, music.DefaultRedirectURL)
		if len(args) == 0 {
			return exitCode(ExitUsage)
		}
		return nil
	}
	switch args[0] {
	case "login":
		return inSubcommand("tidal login", runTidalLogin(ctx, env, args[1:]))
	case "status":
		return inSubcommand("tidal status", runTidalStatus(env))
	}
	return usageError(fmt.Errorf("unknown subcommand %q (want login or status)", args[0]))
}

func runTidalStatus(env *Env) error {
	u := music.TidalUserConfigFromEnv(env.Config)
	tok, err := tidal.LoadUserToken(u.TokenFile)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "logged in to TIDAL as user %s (scopes: %s)\naccess token valid until %s; refresh token: %v\nlogin file: %s\n",
		orNone(tok.UserID), orNone(tok.Scope), tok.Expiry.Local().Format(time.DateTime), tok.RefreshToken != "", u.TokenFile)
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

func runTidalLogin(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "tidal login", "toolport tidal login [--timeout 5m]",
		"Prints TIDAL's login address, waits for TIDAL's redirect back to this machine, and saves the login.")
	timeout := fs.Duration("timeout", 5*time.Minute, "how long to wait for the login")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *timeout <= 0 {
		return usageExit(fs)
	}
	svc := music.Open(music.ConfigFromEnv(env.Config), nil)
	cfg := svc.TidalUserConfig()
	if cfg.TokenFile == "" {
		return errors.New("set TIDAL_TOKEN_FILE (or HOME) to say where the login is kept")
	}
	auth, err := svc.UserAuth()
	if err != nil {
		return err
	}
	redirect, _ := url.Parse(cfg.RedirectURL) // checked by UserAuth
	ln, err := net.Listen("tcp", redirect.Host)
	if err != nil {
		return fmt.Errorf("cannot listen on %s for TIDAL's redirect: %w", redirect.Host, err)
	}
	login, err := auth.Start()
	if err != nil {
		ln.Close()
		return err
	}

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	type outcome struct {
		tok *tidal.UserToken
		err error
	}
	done := make(chan outcome, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+redirect.EscapedPath(), func(w http.ResponseWriter, r *http.Request) {
		tok, err := login.Complete(r.Context(), r.URL.Query())
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if errors.Is(err, tidal.ErrStateMismatch) {
			// Not this login's redirect: refuse it and keep waiting.
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, "<p>This is not the login Toolport started. Use the address it printed.</p>")
			return
		}
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, "<p>TIDAL login failed: %s</p>", html.EscapeString(err.Error()))
		} else {
			fmt.Fprint(w, "<p>Logged in to TIDAL. You can close this tab.</p>")
		}
		// The page reaches the browser before the login ends and the server
		// stops (which would otherwise cut this response off).
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		select {
		case done <- outcome{tok, err}:
		default:
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer func() {
		// Let a response being written finish; then stop.
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
	}()

	fmt.Fprintf(env.Stderr, "Open this address in a browser and log in to TIDAL:\n\n  %s\n\nWaiting for TIDAL's redirect to %s …\n",
		login.URL, cfg.RedirectURL)
	var res outcome
	select {
	case res = <-done:
	case <-ctx.Done():
		return fmt.Errorf("no login within %s", *timeout)
	}
	if res.err != nil {
		return res.err
	}
	if err := tidal.SaveUserToken(cfg.TokenFile, res.tok); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Logged in to TIDAL as user %s; the login is kept in %s (mode 0600).\n", orNone(res.tok.UserID), cfg.TokenFile)
	return nil
}

func runLibrarySync(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "library sync", "toolport library sync [--json]",
		"Imports your TIDAL favourite tracks and albums into the library (needs 'toolport tidal login').\n"+
			"Tracks and albums already there get their metadata refreshed.")
	asJSON := fs.Bool("json", false, "print the counts as JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageExit(fs)
	}
	m, err := openMusic(ctx, env)
	if err != nil {
		return err
	}
	defer m.Close()
	st, err := m.svc.SyncLibrary(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		b, _ := json.Marshal(st)
		fmt.Fprintln(env.Stdout, string(b))
		return nil
	}
	fmt.Fprintf(env.Stdout, "%d favourite tracks: %d added, %d already in the library\n%d favourite albums: %d added, %d already in the library\n",
		st.Tracks, st.TracksAdded, st.TracksUpdated, st.Albums, st.AlbumsAdded, st.AlbumsUpdated)
	return nil
}
