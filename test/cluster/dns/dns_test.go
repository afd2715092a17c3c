package dns

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/net/dns/dnsmessage"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

func service(ns, name, clusterIP string, publishNotReady bool) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{ClusterIP: clusterIP, PublishNotReadyAddresses: publishNotReady},
	}
}

type ep struct {
	addr, hostname string
	ready          *bool
}

func slice(ns, svc, name string, typ discoveryv1.AddressType, eps ...ep) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: typ,
	}
	for _, e := range eps {
		d := discoveryv1.Endpoint{Addresses: []string{e.addr}, Conditions: discoveryv1.EndpointConditions{Ready: e.ready}}
		if e.hostname != "" {
			d.Hostname = ptr.To(e.hostname)
		}
		s.Endpoints = append(s.Endpoints, d)
	}
	return s
}

func testRecords(t *testing.T) *Records {
	t.Helper()
	svcs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	eps := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range []*corev1.Service{
		service("default", "kubernetes", "10.0.0.1", false),
		service("jobs", "train-master-0", corev1.ClusterIPNone, true),
		service("jobs", "web", corev1.ClusterIPNone, false),
		service("jobs", "empty", corev1.ClusterIPNone, false),
	} {
		if err := svcs.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []*discoveryv1.EndpointSlice{
		slice("jobs", "train-master-0", "a", discoveryv1.AddressTypeIPv4, ep{addr: "10.244.0.7", ready: ptr.To(false)}),
		slice("jobs", "web", "b", discoveryv1.AddressTypeIPv4,
			ep{addr: "10.244.0.8", hostname: "web-0", ready: ptr.To(true)},
			ep{addr: "10.244.0.9", hostname: "web-1", ready: ptr.To(false)},
			ep{addr: "10.244.0.10"}),
		slice("jobs", "web", "c", discoveryv1.AddressTypeIPv6, ep{addr: "fd00::1", ready: ptr.To(true)}),
		slice("other", "web", "d", discoveryv1.AddressTypeIPv4, ep{addr: "10.244.0.99"}),
	} {
		if err := eps.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return &Records{Domain: "cluster.local", Services: corelisters.NewServiceLister(svcs), Endpoints: discoverylisters.NewEndpointSliceLister(eps)}
}

func TestLookup(t *testing.T) {
	r := testRecords(t)
	for _, tt := range []struct {
		name            string
		want            []string
		inDomain, found bool
	}{
		{"kubernetes.default.svc.cluster.local.", []string{"10.0.0.1"}, true, true},
		{"KUBERNETES.Default.SVC.cluster.local", []string{"10.0.0.1"}, true, true},
		// Headless, publishNotReadyAddresses: the pod before it is ready.
		{"train-master-0.jobs.svc.cluster.local.", []string{"10.244.0.7"}, true, true},
		// Ready and unconditioned endpoints only, IPv4 only, this namespace only.
		{"web.jobs.svc.cluster.local.", []string{"10.244.0.8", "10.244.0.10"}, true, true},
		{"web-0.web.jobs.svc.cluster.local.", []string{"10.244.0.8"}, true, true},
		{"web-1.web.jobs.svc.cluster.local.", nil, true, true},
		{"web-2.web.jobs.svc.cluster.local.", nil, true, false},
		{"empty.jobs.svc.cluster.local.", nil, true, true},
		{"missing.jobs.svc.cluster.local.", nil, true, false},
		{"jobs.svc.cluster.local.", nil, true, false},
		{"a.b.c.d.svc.cluster.local.", nil, true, false},
		{"cluster.local.", nil, true, false},
		{"train-master-0.jobs.pod.cluster.local.", nil, true, false},
		{"example.com.", nil, false, false},
		{"notcluster.local.", nil, false, false},
	} {
		addrs, inDomain, found, err := r.Lookup(tt.name)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var got []string
		for _, a := range addrs {
			got = append(got, a.String())
		}
		if !slices.Equal(got, tt.want) || inDomain != tt.inDomain || found != tt.found {
			t.Errorf("%s: got %v in domain %v found %v, want %v %v %v", tt.name, got, inDomain, found, tt.want, tt.inDomain, tt.found)
		}
	}
}

func query(t *testing.T, name string, typ dnsmessage.Type) []byte {
	t.Helper()
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 4242, RecursionDesired: true})
	if err := b.StartQuestions(); err != nil {
		t.Fatal(err)
	}
	if err := b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: typ, Class: dnsmessage.ClassINET}); err != nil {
		t.Fatal(err)
	}
	msg, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// parsed is what a test looks at in a reply.
type parsed struct {
	id    uint16
	rcode dnsmessage.RCode
	addrs []string
}

func parse(t *testing.T, msg []byte) parsed {
	t.Helper()
	var m dnsmessage.Message
	if err := m.Unpack(msg); err != nil {
		t.Fatal(err)
	}
	if !m.Response || len(m.Questions) != 1 {
		t.Fatalf("not a response to one question: %+v", m.Header)
	}
	p := parsed{id: m.ID, rcode: m.RCode}
	for _, a := range m.Answers {
		if r, ok := a.Body.(*dnsmessage.AResource); ok {
			p.addrs = append(p.addrs, netip.AddrFrom4(r.A).String())
		}
	}
	return p
}

// fakeUpstream answers every query with 192.0.2.1 and counts them.
func fakeUpstream(t *testing.T) (addr string, queries chan string) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	queries = make(chan string, 10)
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			queries <- q.Name.String()
			ans, _ := reply(h, &q, dnsmessage.RCodeSuccess, [][4]byte{{192, 0, 2, 1}})
			_, _ = pc.WriteTo(ans, from)
		}
	}()
	return pc.LocalAddr().String(), queries
}

func TestServer(t *testing.T) {
	upstream, forwarded := fakeUpstream(t)
	s := &Server{Records: testRecords(t), Upstreams: []string{"127.0.0.1:1", upstream}, Log: logr.Discard()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() { done <- s.ServeUDP(ctx, pc) }()
	go func() { done <- s.ServeTCP(ctx, ln) }()

	ask := func(network, name string, typ dnsmessage.Type) parsed {
		t.Helper()
		addr := pc.LocalAddr().String()
		if network == "tcp" {
			addr = ln.Addr().String()
		}
		conn, err := net.DialTimeout(network, addr, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		msg := query(t, name, typ)
		var ans []byte
		if network == "tcp" {
			if err := writeTCP(conn, msg); err != nil {
				t.Fatal(err)
			}
			ans, err = readTCP(conn)
		} else {
			if _, err := conn.Write(msg); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 65535)
			var n int
			n, err = conn.Read(buf)
			ans = buf[:n]
		}
		if err != nil {
			t.Fatalf("%s %s: %v", network, name, err)
		}
		return parse(t, ans)
	}
	for _, network := range []string{"udp", "tcp"} {
		got := ask(network, "web.jobs.svc.cluster.local.", dnsmessage.TypeA)
		if got.id != 4242 || got.rcode != dnsmessage.RCodeSuccess || !slices.Equal(got.addrs, []string{"10.244.0.8", "10.244.0.10"}) {
			t.Errorf("%s A web: %+v", network, got)
		}
		if got := ask(network, "web.jobs.svc.cluster.local.", dnsmessage.TypeAAAA); got.rcode != dnsmessage.RCodeSuccess || len(got.addrs) != 0 {
			t.Errorf("%s AAAA web: %+v, want an empty answer", network, got)
		}
		if got := ask(network, "nothing.jobs.svc.cluster.local.", dnsmessage.TypeA); got.rcode != dnsmessage.RCodeNameError {
			t.Errorf("%s A nothing: %+v, want NXDOMAIN", network, got)
		}
	}
	// Outside the domain: the first upstream refuses, the second answers.
	if got := ask("udp", "example.com.", dnsmessage.TypeA); got.rcode != dnsmessage.RCodeSuccess || !slices.Equal(got.addrs, []string{"192.0.2.1"}) {
		t.Errorf("A example.com: %+v, want the upstream's answer", got)
	}
	select {
	case name := <-forwarded:
		if name != "example.com." {
			t.Errorf("forwarded %q", name)
		}
	case <-time.After(5 * time.Second):
		t.Error("nothing forwarded")
	}
	// A server without upstreams (not the running one: its goroutines read
	// Upstreams) fails names outside the domain.
	alone := &Server{Records: s.Records, Log: logr.Discard()}
	ans, err := alone.Answer(ctx, "udp", query(t, "example.com.", dnsmessage.TypeA))
	if err != nil {
		t.Fatal(err)
	}
	if got := parse(t, ans); got.rcode != dnsmessage.RCodeServerFailure {
		t.Errorf("A example.com without upstreams: %+v, want SERVFAIL", got)
	}
	cancel()
	for range 2 {
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}
}

func TestUpstreams(t *testing.T) {
	conf := "# comment\nsearch example.com\nnameserver 127.0.0.53\nnameserver 10.244.0.1\nnameserver fe80::1%eth0\noptions edns0\n"
	got := Upstreams([]byte(conf), "10.244.0.1:53")
	if want := []string{"127.0.0.53:53", "[fe80::1]:53"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
