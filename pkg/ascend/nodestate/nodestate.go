// Package nodestate publishes an Ascend node's chips the way MindX's device
// plugin does: the ConfigMap kube-system/mindx-dl-deviceinfo-<node> (key
// DeviceInfoCfg) lists the usable, unhealthy and network-unhealthy chips per
// resource, and the node label servertype names the chip model and AI cores
// (e.g. Ascend910B-20). The admin-set labels accelerator-type and host-arch
// are read, never written.
package nodestate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/ascend"
)

const (
	// Namespace holds the device-info ConfigMaps.
	Namespace = "kube-system"
	// ConfigMapPrefix prefixes the node name in the ConfigMap's name.
	ConfigMapPrefix = "mindx-dl-deviceinfo-"
	// ConfigMapKey is the ConfigMap key holding the device info.
	ConfigMapKey = "DeviceInfoCfg"
	// ServerTypeLabel is the node label this package sets.
	ServerTypeLabel = "servertype"
	// AcceleratorTypeLabel is set by the admin (e.g. module-910b-8) and
	// only read.
	AcceleratorTypeLabel = "accelerator-type"
	// HostArchLabel is set by the admin (huawei-arm, huawei-x86) and only
	// read.
	HostArchLabel = "host-arch"

	// UnhealthySuffix follows the resource name in the key of the
	// unhealthy chips' list.
	UnhealthySuffix = "-Unhealthy"
	// NetworkUnhealthySuffix follows the resource name in the key of the
	// list of chips whose RoCE link is down.
	NetworkUnhealthySuffix = "-NetworkUnhealthy"
)

// Source is what the reporter reads; the Ascend device plugin's Vendor
// (pkg/ascend/plugin) is one.
type Source interface {
	Chips() []ascend.Chip
	Health(phy int) ascend.ChipHealth
}

// DeviceInfo is the node's chips per list. DeviceList's keys are the
// resource (usable chips), resource+UnhealthySuffix and
// resource+NetworkUnhealthySuffix; values are comma-separated device IDs.
type DeviceInfo struct {
	DeviceList map[string]string `json:"DeviceList"`
	UpdateTime int64             `json:"UpdateTime"`
}

// DeviceInfoCfg is the DeviceInfoCfg document: the info and the SHA-256 of
// its JSON encoding.
type DeviceInfoCfg struct {
	DeviceInfo DeviceInfo `json:"DeviceInfo"`
	CheckCode  string     `json:"CheckCode"`
}

// Checksum returns the CheckCode of info.
func Checksum(info DeviceInfo) (string, error) {
	b, err := json.Marshal(info)
	if err != nil {
		return "", fmt.Errorf("encoding device info: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Lists returns the device lists of chips as the ConfigMap holds them.
func Lists(chips []ascend.Chip, health func(phy int) ascend.ChipHealth) map[string]string {
	ids := map[string][]string{}
	for _, c := range chips {
		r := c.Resource()
		for _, k := range []string{r, r + UnhealthySuffix, r + NetworkUnhealthySuffix} {
			if _, ok := ids[k]; !ok {
				ids[k] = nil // every list is written, empty ones too
			}
		}
		h := health(c.PhyID)
		switch {
		case !h.Healthy:
			ids[r+UnhealthySuffix] = append(ids[r+UnhealthySuffix], c.ID())
		case !h.NetworkHealthy:
			ids[r+NetworkUnhealthySuffix] = append(ids[r+NetworkUnhealthySuffix], c.ID())
		default:
			ids[r] = append(ids[r], c.ID())
		}
	}
	out := make(map[string]string, len(ids))
	for k, v := range ids {
		out[k] = strings.Join(v, ",")
	}
	return out
}

// ServerType returns the servertype label of chips, e.g. Ascend910B-20,
// or "" without chips.
func ServerType(chips []ascend.Chip) string {
	if len(chips) == 0 {
		return ""
	}
	c := chips[0]
	return c.Model() + "-" + strconv.Itoa(c.Info.AICores)
}

// API is what the Reporter needs of the API server: its node and its
// labels, and the device-info ConfigMap. *nodeclient.Client serves it.
type API interface {
	GetNode(ctx context.Context, name string) (*corev1.Node, error)
	MergeNodeLabels(ctx context.Context, name string, labels map[string]string) error
	GetConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	CreateConfigMap(ctx context.Context, cm *corev1.ConfigMap) error
	UpdateConfigMap(ctx context.Context, cm *corev1.ConfigMap) error
}

// Options configure a Reporter.
type Options struct {
	Client   API
	NodeName string
	// Period is how often the chips are read (default 5 s).
	Period time.Duration
	// Refresh rewrites an unchanged ConfigMap this often, so its
	// UpdateTime shows the plugin is alive (default 1 min).
	Refresh time.Duration
}

// Reporter keeps the node's ConfigMap and servertype label current.
type Reporter struct {
	o       Options
	src     Source
	last    map[string]string
	written time.Time
	label   string
}

// New returns a Reporter of src's chips.
func New(o Options, src Source) (*Reporter, error) {
	if o.Client == nil || o.NodeName == "" {
		return nil, errors.New("node state needs a cluster client and the node name")
	}
	if o.Period <= 0 {
		o.Period = 5 * time.Second
	}
	if o.Refresh <= 0 {
		o.Refresh = time.Minute
	}
	return &Reporter{o: o, src: src}, nil
}

// Run syncs every period until ctx ends; failures are logged and retried.
func (r *Reporter) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("node", r.o.NodeName)
	t := time.NewTicker(r.o.Period)
	defer t.Stop()
	for {
		if err := r.Sync(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "Publishing the node's Ascend state")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sync publishes the chips once: the ConfigMap when the lists changed or
// the refresh interval passed, and the servertype label when it differs.
// Without chips (before the plugin started) it does nothing.
func (r *Reporter) Sync(ctx context.Context) error {
	chips := r.src.Chips()
	if len(chips) == 0 {
		return nil
	}
	sort.Slice(chips, func(i, j int) bool { return chips[i].PhyID < chips[j].PhyID })
	lists := Lists(chips, r.src.Health)
	if !maps.Equal(lists, r.last) || time.Since(r.written) >= r.o.Refresh {
		if err := r.writeConfigMap(ctx, lists); err != nil {
			return err
		}
		if !maps.Equal(lists, r.last) {
			klog.FromContext(ctx).Info("Published Ascend device info", "node", r.o.NodeName, "deviceList", lists)
		}
		r.last, r.written = lists, time.Now()
	}
	if st := ServerType(chips); st != r.label {
		if err := r.labelNode(ctx, st); err != nil {
			return err
		}
		r.label = st
	}
	return nil
}

func (r *Reporter) writeConfigMap(ctx context.Context, lists map[string]string) error {
	info := DeviceInfo{DeviceList: lists, UpdateTime: time.Now().Unix()}
	sum, err := Checksum(info)
	if err != nil {
		return err
	}
	b, err := json.Marshal(DeviceInfoCfg{DeviceInfo: info, CheckCode: sum})
	if err != nil {
		return fmt.Errorf("encoding device info: %w", err)
	}
	name := ConfigMapPrefix + r.o.NodeName
	cm, err := r.o.Client.GetConfigMap(ctx, Namespace, name)
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace}, Data: map[string]string{ConfigMapKey: string(b)}}
		if err := r.o.Client.CreateConfigMap(ctx, cm); err != nil {
			return fmt.Errorf("creating ConfigMap %s/%s: %w", Namespace, name, err)
		}
		return nil
	} else if err != nil {
		return fmt.Errorf("getting ConfigMap %s/%s: %w", Namespace, name, err)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[ConfigMapKey] = string(b)
	if err := r.o.Client.UpdateConfigMap(ctx, cm); err != nil {
		return fmt.Errorf("updating ConfigMap %s/%s: %w", Namespace, name, err)
	}
	return nil
}

// labelNode sets servertype only; accelerator-type and host-arch are
// logged as found.
func (r *Reporter) labelNode(ctx context.Context, serverType string) error {
	node, err := r.o.Client.GetNode(ctx, r.o.NodeName)
	if err != nil {
		return fmt.Errorf("getting node %s: %w", r.o.NodeName, err)
	}
	klog.FromContext(ctx).Info("Ascend node", "node", r.o.NodeName, ServerTypeLabel, serverType,
		AcceleratorTypeLabel, node.Labels[AcceleratorTypeLabel], HostArchLabel, node.Labels[HostArchLabel])
	if node.Labels[ServerTypeLabel] == serverType {
		return nil
	}
	return r.o.Client.MergeNodeLabels(ctx, r.o.NodeName, map[string]string{ServerTypeLabel: serverType})
}
