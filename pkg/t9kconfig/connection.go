package t9kconfig

import (
	"fmt"
	"os"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Connection is how a client (t9k, t9k-pf) reaches the cluster: through
// the platform's gateway with a context of the T9k config, or as kubectl
// does. It is kubectl's connection flags and a genericclioptions.
// RESTClientGetter. The T9k config is used when no kubeconfig is named
// (--kubeconfig, --server, or $KUBECONFIG unless ConfigPath is set) and
// it has the context of --context, or a current one; a --context that the
// T9k config does not have names a kubeconfig context, unless ConfigPath
// named the T9k config.
type Connection struct {
	*genericclioptions.ConfigFlags
	// ConfigPath is the T9k config's path (-c/--config); empty is
	// DefaultPath.
	ConfigPath string
	// APIKey, when set, is used instead of the context's credential.
	APIKey string

	once sync.Once
	err  error
}

// prepare settles the connection once: with a T9k context, it sets the
// connection flags to the gateway and the context's credential, and reads
// no kubeconfig.
func (c *Connection) prepare() error {
	c.once.Do(func() { c.err = c.useT9kContext() })
	return c.err
}

// useT9kContext sets the flags from the T9k context in effect, if any.
func (c *Connection) useT9kContext() error {
	path, named := c.ConfigPath, c.ConfigPath != ""
	if *c.KubeConfig != "" || *c.APIServer != "" || (!named && os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "") {
		return nil
	}
	if !named {
		path = DefaultPath()
	}
	cfg, err := Load(path)
	if err != nil {
		return err
	}
	name := *c.Context
	if name == "" {
		name = cfg.CurrentContext
	}
	ctx := cfg.Find(name)
	switch {
	case ctx == nil && named && name == "":
		return fmt.Errorf("the T9k config %s has no current context: t9k config use-context NAME", path)
	case ctx == nil && named:
		return fmt.Errorf("the T9k config %s has no context %q", path, name)
	case ctx == nil && c.APIKey != "":
		return fmt.Errorf("an API key needs a context of the T9k config %s for the server; log in with t9k config auth SERVER --apikey", path)
	case ctx == nil:
		return nil
	}
	if c.APIKey != "" {
		ctx.Auth = Auth{APIKey: c.APIKey}
	}
	rc, err := ctx.RESTConfig()
	if err != nil {
		return err
	}
	*c.KubeConfig = os.DevNull
	*c.Context = ""
	*c.APIServer, *c.BearerToken = rc.Host, rc.BearerToken
	*c.Insecure = *c.Insecure || rc.Insecure
	if len(rc.CAData) > 0 {
		c.WrapConfigFn = func(r *rest.Config) *rest.Config {
			r.CAData = rc.CAData
			return r
		}
	}
	return nil
}

// ToRESTConfig implements genericclioptions.RESTClientGetter.
func (c *Connection) ToRESTConfig() (*rest.Config, error) {
	if err := c.prepare(); err != nil {
		return nil, err
	}
	return c.ConfigFlags.ToRESTConfig()
}

// ToDiscoveryClient implements genericclioptions.RESTClientGetter.
func (c *Connection) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	if err := c.prepare(); err != nil {
		return nil, err
	}
	return c.ConfigFlags.ToDiscoveryClient()
}

// ToRESTMapper implements genericclioptions.RESTClientGetter.
func (c *Connection) ToRESTMapper() (meta.RESTMapper, error) {
	if err := c.prepare(); err != nil {
		return nil, err
	}
	return c.ConfigFlags.ToRESTMapper()
}

// ToRawKubeConfigLoader implements genericclioptions.RESTClientGetter; a
// T9k config that cannot be read leaves the flags as they are, and
// ToRESTConfig reports it.
func (c *Connection) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	_ = c.prepare()
	return c.ConfigFlags.ToRawKubeConfigLoader()
}
