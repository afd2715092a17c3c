package dns

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// resyncPeriod is the informers' resync; the watches keep them current.
const resyncPeriod = 10 * time.Minute

// Config is what Run needs.
type Config struct {
	// Listen is the address served over UDP and TCP, e.g. 10.244.0.1:53.
	Listen string
	// Domain is the cluster domain, e.g. cluster.local.
	Domain string
	// Upstreams are the resolvers of other names (see Upstreams).
	Upstreams []string
}

// Run watches Services and EndpointSlices through cfg and serves DNS until
// ctx ends. It listens only once the watches have synced, so a client that
// can connect gets complete answers.
func Run(ctx context.Context, rc *rest.Config, cfg Config, log logr.Logger) error {
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	f := informers.NewSharedInformerFactory(cs, resyncPeriod)
	s := &Server{
		Records: &Records{
			Domain:    cfg.Domain,
			Services:  f.Core().V1().Services().Lister(),
			Endpoints: f.Discovery().V1().EndpointSlices().Lister(),
		},
		Upstreams: cfg.Upstreams,
		Log:       log,
	}
	f.Start(ctx.Done())
	defer f.Shutdown()
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("syncing the %s watch: %w", typ, ctx.Err())
		}
	}
	pc, err := net.ListenPacket("udp", cfg.Listen)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		_ = pc.Close()
		return err
	}
	log.Info("Serving DNS", "listen", cfg.Listen, "domain", cfg.Domain, "upstreams", cfg.Upstreams)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 2)
	go func() { errs <- s.ServeUDP(ctx, pc) }()
	go func() { errs <- s.ServeTCP(ctx, ln) }()
	err = <-errs
	cancel()
	return errors.Join(err, <-errs)
}

// Upstreams returns the nameservers of a resolv.conf as host:port
// addresses, leaving out skip (the server's own address).
func Upstreams(resolvConf []byte, skip string) []string {
	var ups []string
	sc := bufio.NewScanner(bytes.NewReader(resolvConf))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[0] != "nameserver" {
			continue
		}
		addr := net.JoinHostPort(strings.SplitN(f[1], "%", 2)[0], "53")
		if addr != skip {
			ups = append(ups, addr)
		}
	}
	return ups
}
