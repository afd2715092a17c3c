package t9kcli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"

	"github.com/accelstack/accelstack/pkg/gateway/gatewayapi"
	"github.com/accelstack/accelstack/pkg/t9kconfig"
)

// configCommand returns t9k config and its subcommands, which edit the
// T9k config file.
func (o *options) configCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Log in to the platform and manage the contexts of the T9k config",
	}
	cmd.AddCommand(o.authCommand(), o.getContextsCommand(), o.useContextCommand(), o.deleteContextCommand())
	return cmd
}

// configPath is the T9k config file the config commands edit.
func (o *options) configPath() string {
	if o.conn.ConfigPath != "" {
		return o.conn.ConfigPath
	}
	return t9kconfig.DefaultPath()
}

// authOptions are t9k config auth's flags.
type authOptions struct {
	apiKey bool
	user   string
}

// authCommand returns t9k config auth.
func (o *options) authCommand() *cobra.Command {
	a := &authOptions{}
	cmd := &cobra.Command{
		Use:   "auth SERVER",
		Short: "Log in to the platform at SERVER with a user name and password, or an API key, and keep the context",
		Example: "  t9k config auth https://platform.example.com\n" +
			"  t9k config auth https://platform.example.com -u alice\n" +
			"  t9k config auth https://platform.example.com --apikey",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			server, err := t9kconfig.ParseServer(args[0])
			if err != nil {
				return usageError(cmd, "%v", err)
			}
			return o.auth(cmd.Context(), server.String(), a)
		},
	}
	cmd.Flags().BoolVarP(&a.apiKey, "apikey", "k", false, "Log in with an API key, asked for, instead of a user name and password")
	cmd.Flags().StringVarP(&a.user, "user", "u", "", "The user name (asked for when not given)")
	return cmd
}

// auth logs in at server and keeps the context.
func (o *options) auth(ctx context.Context, server string, a *authOptions) error {
	path := o.configPath()
	cfg, err := t9kconfig.Load(path)
	if err != nil {
		return err
	}
	p := t9kconfig.NewPrompter(o.streams.In, o.streams.Out)
	c := t9kconfig.Context{Server: server, Prefixes: maps.Clone(t9kconfig.DefaultPrefixes)}
	if ca := *o.kube.CAFile; ca != "" {
		if c.CertificateAuthorityData, err = os.ReadFile(ca); err != nil {
			return fmt.Errorf("reading the certificate authority: %w", err)
		}
	}
	c.InsecureSkipTLSVerify = *o.kube.Insecure
	srv, _ := t9kconfig.ParseServer(server)
	var user string
	if a.apiKey {
		fmt.Fprintln(o.streams.Out, "Authenticating using API Key...")
		if c.Auth.APIKey, err = p.Secret("Please enter your API Key: "); err != nil {
			return err
		}
		if err := checkCredential(ctx, &c); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(o.streams.Out, "Authenticating using username and password by default, add --apikey to use apikey.")
		user = a.user
		if user == "" {
			if user, err = p.Line("Please enter your username: "); err != nil {
				return err
			}
		}
		password, err := p.Secret("Please enter your password: ")
		if err != nil {
			return err
		}
		if c.Auth.Token, err = passwordLogin(ctx, &c, user, password); err != nil {
			return err
		}
	}
	if c.Name, err = contextName(p, cfg, t9kconfig.DefaultName(srv, user, c.Auth.APIKey)); err != nil {
		return err
	}
	cfg.Set(c)
	if err := cfg.Save(path); err != nil {
		return err
	}
	fmt.Fprintln(o.streams.Out, "Login succeeded!")
	return nil
}

// httpClient returns an HTTP client that trusts the context's server as
// a Kubernetes client of the context would.
func httpClient(c *t9kconfig.Context) (*http.Client, error) {
	rc := &rest.Config{TLSClientConfig: rest.TLSClientConfig{CAData: c.CertificateAuthorityData, Insecure: c.InsecureSkipTLSVerify}, Timeout: 30 * time.Second}
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		return nil, fmt.Errorf("the connection to %s: %w", c.Server, err)
	}
	return hc, nil
}

// passwordLogin logs in at the context's gateway and returns the login
// token.
func passwordLogin(ctx context.Context, c *t9kconfig.Context, user, password string) (string, error) {
	hc, err := httpClient(c)
	if err != nil {
		return "", err
	}
	body, _ := json.Marshal(gatewayapi.PasswordLogin{Username: user, Password: password})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Server+gatewayapi.LoginPath, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("logging in: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("logging in at %s: %w", c.Server, err)
	}
	defer resp.Body.Close() //nolint:errcheck // read whole below
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("login failed: %s: %s", resp.Status, strings.TrimSpace(string(out)))
	}
	var ans gatewayapi.TokenAnswer
	if err := json.Unmarshal(out, &ans); err != nil || !strings.HasPrefix(ans.Token, gatewayapi.TokenPrefix) {
		return "", fmt.Errorf("login failed: %s answered no login token", c.Server)
	}
	return ans.Token, nil
}

// checkCredential asks the context's gateway for the API server's version
// with the context's credential, which it refuses when the credential is
// not valid.
func checkCredential(ctx context.Context, c *t9kconfig.Context) error {
	hc, err := httpClient(c)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Server+gatewayapi.KubernetesPath+"/version", nil)
	if err != nil {
		return fmt.Errorf("checking the API key: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Auth.Credential())
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("checking the API key at %s: %w", c.Server, err)
	}
	defer resp.Body.Close() //nolint:errcheck // drained below
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	switch resp.StatusCode {
	case http.StatusOK:
		return nil
	case http.StatusUnauthorized:
		return errors.New("login failed: the API key is not valid (unknown or revoked)")
	}
	return fmt.Errorf("login failed: %s answered %s", c.Server, resp.Status)
}

// contextName asks for the new context's name, def by default; a name
// that cfg has already is overwritten when the user says so, or asked
// again.
func contextName(p *t9kconfig.Prompter, cfg *t9kconfig.Config, def string) (string, error) {
	for {
		name, err := p.Line(fmt.Sprintf("Please enter Context name [default: %s]: ", def))
		if err != nil {
			return "", err
		}
		if name == "" {
			name = def
		}
		if err := t9kconfig.ValidateName(name); err != nil {
			fmt.Fprintln(p.Out, err)
			continue
		}
		if cfg.Find(name) == nil {
			return name, nil
		}
		answer, err := p.Line(fmt.Sprintf("Context %q exists. Overwrite it? [y/N]: ", name))
		if err != nil {
			return "", err
		}
		if strings.EqualFold(answer, "y") || strings.EqualFold(answer, "yes") {
			return name, nil
		}
	}
}

// getContextsCommand returns t9k config get-contexts.
func (o *options) getContextsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "get-contexts [NAME]",
		Short: "List the contexts of the T9k config, or show the one named",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			cfg, err := t9kconfig.Load(o.configPath())
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(o.streams.Out, 0, 8, 3, ' ', 0)
			fmt.Fprintln(tw, "CURRENT\tNAME\tSERVER\tAUTH_TYPE")
			for _, c := range cfg.Contexts {
				if len(args) == 1 && c.Name != args[0] {
					continue
				}
				current := ""
				if c.Name == cfg.CurrentContext {
					current = "*"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", current, c.Name, c.Server, c.Auth.Type())
			}
			if err := tw.Flush(); err != nil {
				return fmt.Errorf("writing the table: %w", err)
			}
			if len(args) == 1 && cfg.Find(args[0]) == nil {
				return fmt.Errorf("no context %q in %s", args[0], o.configPath())
			}
			return nil
		},
	}
}

// useContextCommand returns t9k config use-context.
func (o *options) useContextCommand() *cobra.Command {
	return o.contextCommand("use-context NAME", "Make NAME the current context of the T9k config", "Switched to context %q.\n",
		func(cfg *t9kconfig.Config, name string) bool {
			if cfg.Find(name) == nil {
				return false
			}
			cfg.CurrentContext = name
			return true
		})
}

// deleteContextCommand returns t9k config delete-context.
func (o *options) deleteContextCommand() *cobra.Command {
	return o.contextCommand("delete-context NAME", "Delete the context NAME of the T9k config, even the current one", "Deleted context %q.\n",
		(*t9kconfig.Config).Delete)
}

// contextCommand returns a command that changes the T9k config by the
// context its argument names: edit reports false when the config has no
// such context.
func (o *options) contextCommand(use, short, done string, edit func(*t9kconfig.Config, string) bool) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			path := o.configPath()
			cfg, err := t9kconfig.Load(path)
			if err != nil {
				return err
			}
			if !edit(cfg, args[0]) {
				return fmt.Errorf("no context %q in %s", args[0], path)
			}
			if err := cfg.Save(path); err != nil {
				return err
			}
			fmt.Fprintf(o.streams.Out, done, args[0])
			return nil
		},
	}
}
