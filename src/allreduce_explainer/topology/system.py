"""NCCL's system model built from a topology file: ncclTopoGetSystemFromXml (src/graph/topo.cc).

The nodes are NCCL's ten types (src/graph/topo.h:42-51): GPUs, PCI switches, the NVSwitch, CPUs
(NUMA domains), NICs and their NET ports, and since 2.28 a DEV node per physical GPU between the
GPU and the PCI tree (topo.cc:590-635) that carries the NVLinks. A link has a type and a
bandwidth in GB/s: NVLink count x the per-link figure of the GPU's generation
(topo.h:274-283), PCIe width x speed (topo.cc:651-659), the CPUs' interconnect by vendor and
model (topo.cc:60-83), a NET port's speed / 8000 (topo.cc:418). Bandwidths are C floats; they
are rounded to float32 where NCCL stores them, so the search compares what NCCL compares.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .xml import XmlNode, bad, bus_id, c_int

# Node types (topo.h:42-51)
GPU, PCI, NVS, CPU, NIC, NET, GIN, RMA, DEV, CXB = range(10)
NODE_TYPE = ("GPU", "PCI", "NVS", "CPU", "NIC", "NET", "GIN", "RMA", "DEV", "CXB")  # topo.cc:31

# Link types (topo.h:55-65) and path types (src/include/graph.h:117-154)
LINK_LOC, LINK_NVL, LINK_C2C, LINK_PCI, LINK_SYS, LINK_NET = 0, 1, 3, 4, 9, 10
PATH_LOC, PATH_NVL, PATH_NVB, PATH_C2C, PATH_PIX, PATH_PXB = 0, 1, 2, 3, 4, 5
PATH_P2C, PATH_PXN, PATH_PHB, PATH_SYS, PATH_NET, PATH_DIS = 6, 7, 8, 9, 10, 11
PATH_TYPE = ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS")

# Bandwidths in GB/s (topo.h:17-35)
LOC_BW = 5000.0
MLOPART_LOC_BW = 2618.0
P9_BW, ARM_BW, AMD_BW = 32.0, 6.0, 16.0
BDW_QPI_BW, SKL_QPI_BW, SRP_QPI_BW, ERP_QPI_BW = 6.0, 10.0, 22.0, 40.0
ZPI_BW, YONGFENG_ZPI_BW = 6.0, 9.0

# CPU constants (src/include/graph.h:78-90)
ARCH_X86, ARCH_POWER, ARCH_ARM = 1, 2, 3
VENDOR_INTEL, VENDOR_AMD, VENDOR_ZHAOXIN = 1, 2, 3
MODEL_BDW, MODEL_SKL, MODEL_SRP, MODEL_ERP = 1, 2, 3, 4
MODEL_YONGFENG = 1

UNDEF = -1
LOCAL_ID_MASK = 0x00FFFFFFFFFFFFFF  # topo.h:89
MAXCHANNELS = 64  # src/include/device.h:91


_F32 = struct.Struct("f")


def f32(x: float) -> float:
    """x as the C float NCCL stores it in."""
    return _F32.unpack(_F32.pack(x))[0]


def topo_id(system_id: int, local_id: int) -> int:
    """NCCL_TOPO_ID (topo.h:93)."""
    return (system_id << 56) + (local_id & LOCAL_ID_MASK)


def nvlink_bw(sm: int) -> float:
    """ncclTopoNVLinkBw (topo.h:274-283): one NVLink's GB/s by compute capability."""
    return (
        40.1 if sm >= 100 else
        20.6 if sm >= 90 else
        12.0 if sm == 86 else
        20.0 if sm >= 80 else
        20.0 if sm >= 70 else
        18.0 if sm >= 60 else
        20.0
    )  # fmt: skip


@dataclass(eq=False)
class Link:
    """ncclTopoLink (topo.h:71-75); bw changes while the search books bandwidth."""

    type: int
    bw: float
    rem: Node


@dataclass(eq=False)
class Path:
    """ncclTopoLinkList (topo.h:80-85): the links from a node to another, its type and its
    bandwidth (the narrowest link)."""

    links: list[Link] = field(default_factory=list)
    bw: float = 0.0
    type: int = PATH_DIS

    @property
    def count(self) -> int:
        return len(self.links)


@dataclass(eq=False)
class Node:
    """ncclTopoNode (topo.h:103-152); the union's fields are plain attributes here."""

    type: int
    id: int
    links: list[Link] = field(default_factory=list)
    paths: dict[int, list[Path]] = field(default_factory=dict)
    used: int = 0
    # GPU: dev, rank, sm, gdr, mlopart, parent (its DEV); DEV: dev, sm, device, ngpus
    dev: int = UNDEF
    rank: int = UNDEF
    sm: int = UNDEF
    gdr: int = 0
    mlopart: int = UNDEF
    parent: Node | None = None
    device: int = 0  # PCI and DEV: vendor, device, subsystem vendor and device
    ngpus: int = 0
    # CPU
    arch: int = UNDEF
    vendor: int = UNDEF
    model: int = UNDEF
    # NET
    asic: int = 0
    port: int = UNDEF
    bw: float = 0.0
    latency: float = 0.0
    coll: int = 0
    max_channels: int = MAXCHANNELS
    local_gpu: int = UNDEF
    rail: int = UNDEF
    plane: int = UNDEF
    name: str = ""  # the NET's device name, the PCI element's bus id: for the reader
    busid: str = ""

    def label(self) -> str:
        """NCCL's name for the node in its GRAPH lines: GPU/0-7000 (topo.cc:285-307)."""
        return f"{NODE_TYPE[self.type]}/{self.id >> 56:x}-{self.id & LOCAL_ID_MASK:x}"


@dataclass(eq=False)
class System:
    """ncclTopoSystem (topo.h:159-167)."""

    nodes: list[list[Node]] = field(default_factory=lambda: [[] for _ in NODE_TYPE])
    host_hashes: list[int] = field(default_factory=list)
    system_id: int = 0
    max_bw: float = 0.0
    total_bw: float = 0.0
    inter: int = 0
    # the user's P2P level (ncclGetUserP2pLevel, paths.cc:288-292: NCCL_P2P_LEVEL, or LOC for
    # NCCL_P2P_DISABLE=1), None for NCCL's own; LOC is also what NVML reporting no P2P between
    # any two GPUs does to the paths (paths.cc:373-402), which a dump file does not record
    p2p_level: int | None = None
    memo: dict | None = None  # once paths are final: answers that depend on paths only

    def node(self, type_: int, id_: int) -> Node | None:
        """ncclTopoGetNode (topo.cc:92-100)."""
        return next((n for n in self.nodes[type_] if n.id == id_), None)

    def create(self, type_: int, id_: int) -> Node:
        """ncclTopoCreateNode (topo.cc:102-133)."""
        n = Node(type_, id_)
        self.nodes[type_].append(n)
        return n

    def index(self, node: Node) -> int:
        return self.nodes[node.type].index(node)

    @property
    def gpus(self) -> list[Node]:
        return self.nodes[GPU]

    @property
    def nets(self) -> list[Node]:
        return self.nodes[NET]

    def rank_index(self, rank: int) -> int:
        """ncclTopoRankToIndex (topo.h:233-243)."""
        for i, g in enumerate(self.gpus):
            if g.rank == rank:
                return i
        raise bad(f"no GPU of rank {rank}")

    def cpu_type(self) -> tuple[int, int, int]:
        """ncclTopoCpuType (topo.cc:2141-2146): the first CPU's."""
        c = self.nodes[CPU][0]
        return c.arch, c.vendor, c.model

    def comp_cap(self) -> tuple[int, int]:
        """ncclTopoGetCompCap (topo.cc:2211-2222): over the DEV nodes."""
        sms = [d.sm for d in self.nodes[DEV]]
        if not sms:
            raise bad("has no GPU with a rank: NCCL has nothing to connect")
        return min(sms), max(sms)


def connect(node: Node, rem: Node, type_: int, bw: float) -> None:
    """ncclTopoConnectNodes (topo.cc:168-193): add bw to the link of that type to rem (NVLinks
    aggregate), and keep the links sorted by bandwidth, highest first."""
    link = next((lk for lk in node.links if lk.rem is rem and lk.type == type_), None)
    if link is None:
        link = Link(type_, 0.0, rem)
        node.links.append(link)
    link.bw = f32(link.bw + bw)
    i = node.links.index(link)
    node.links.pop(i)
    while i > 0 and node.links[i - 1].bw < link.bw:
        i -= 1
    node.links.insert(i, link)


def find_local_cpu(node: Node, came_from: Node | None = None) -> Node | None:
    """findLocalCpu (topo.cc:40-55): up the PCI tree, following PCI switches only."""
    if node.type == CPU:
        return node
    for lk in node.links:
        if lk.type == LINK_PCI and lk.rem is not came_from and lk.rem.type in (PCI, CPU):
            cpu = find_local_cpu(lk.rem, node)
            if cpu is not None:
                return cpu
    return None


def inter_cpu_bw(cpu: Node) -> float:
    """ncclTopoGetInterCpuBw (topo.cc:60-83)."""
    if cpu.arch == ARCH_POWER:
        return P9_BW
    if cpu.arch == ARCH_ARM:
        return ARM_BW
    bw = LOC_BW
    if cpu.arch == ARCH_X86 and cpu.vendor == VENDOR_INTEL:
        bw = {MODEL_ERP: ERP_QPI_BW, MODEL_SRP: SRP_QPI_BW, MODEL_SKL: SKL_QPI_BW}.get(
            cpu.model, BDW_QPI_BW
        )
    if cpu.arch == ARCH_X86 and cpu.vendor == VENDOR_AMD:
        bw = AMD_BW
    if cpu.arch == ARCH_X86 and cpu.vendor == VENDOR_ZHAOXIN:
        bw = YONGFENG_ZPI_BW if cpu.model == MODEL_YONGFENG else ZPI_BW
    return bw


# kvDictPciClass, kvDictPciGen (topo.cc:538-557): prefixes, the last entry the fallback
PCI_CLASS = (("0x060400", PCI), ("0x080100", PCI), ("0x068000", NVS), ("0x068001", CPU),
             ("0x03", GPU), ("0x02", NIC))  # fmt: skip
PCI_GEN = (("2.5 GT/s", 15), ("5 GT/s", 30), ("8 GT/s", 60), ("16 GT/s", 120),
           ("32 GT/s", 240), ("2.5 GT/s PCIe", 15), ("5.0 GT/s PCIe", 30), ("8.0 GT/s PCIe", 60),
           ("16.0 GT/s PCIe", 120), ("32.0 GT/s PCIe", 240), ("64.0 GT/s PCIe", 480))  # fmt: skip
CPU_ARCH = (("x86_64", ARCH_X86), ("arm64", ARCH_ARM), ("ppc64", ARCH_POWER))
CPU_VENDOR = (("GenuineIntel", VENDOR_INTEL), ("AuthenticAMD", VENDOR_AMD),
              ("CentaurHauls", VENDOR_ZHAOXIN), ("  Shanghai  ", VENDOR_ZHAOXIN))  # fmt: skip


def kv(text: str, table, fallback: int) -> int:
    """kvConvertToInt (xml.h:424-437): the first entry the text starts with."""
    return next((v for k, v in table if text.startswith(k)), fallback)


def pci_device(x: XmlNode) -> int:
    """ncclTopoGetIntDevice (topo.cc:521-534)."""
    out = 0
    for key, shift in (("vendor", 48), ("device", 32), ("subsystem_vendor", 16),
                       ("subsystem_device", 0)):  # fmt: skip
        value = x.get(key)
        if value is not None:
            out += c_int(value, f"{x.where()} attribute {key}") << shift
    return out


class _Builder:
    """ncclTopoGetSystemFromXml and its helpers (topo.cc:401-990) on one parsed file."""

    def __init__(self, top: XmlNode):
        self.s = System()
        self.top = top

    def system_id(self, cpu: XmlNode) -> int:
        """ncclGetSystemId (topo.cc:713-724)."""
        text = cpu.get("host_hash")
        h = int(text, 16) if text else 0
        if h not in self.s.host_hashes:
            self.s.host_hashes.append(h)
        return self.s.host_hashes.index(h)

    def add_net(self, x: XmlNode, nic: Node, sid: int) -> None:
        """ncclTopoAddNet (topo.cc:401-446)."""
        dev = x.int("dev")
        net = self.s.create(NET, topo_id(sid, dev))
        net.dev = dev
        guid = x.get("guid")
        net.asic = int(guid, 16) if guid else net.id
        mbps = x.int("speed", 0)
        if mbps <= 0:
            mbps = 10000
        net.bw = f32(mbps / 8000.0)
        net.latency = float(x.get("latency") or 0)
        net.port = x.int("port", 0)
        net.gdr = x.int("gdr", 0)
        net.max_channels = x.int("maxconn", MAXCHANNELS)
        net.coll = x.int("coll", 0)
        net.rail = x.int("rail", UNDEF)
        net.plane = x.int("plane", UNDEF)
        net.name = x.get("name") or ""
        connect(nic, net, LINK_NET, net.bw)
        connect(net, nic, LINK_NET, net.bw)

    def add_nic(self, x: XmlNode, nic: Node, sid: int) -> None:
        """ncclTopoAddNic (topo.cc:488-509): each <net> with a dev that NCCL uses for NET
        (GIN and RMA devices carry no channel and are left out)."""
        for sub in x.subs:
            if sub.name != "net" or sub.get("dev") is None:
                continue
            if sub.int("net", 1):
                self.add_net(sub, nic, sid)

    def add_gpu(self, xpci: XmlNode, xgpu: XmlNode, parent: Node, sid: int, busid: int,
                bw: float) -> None:  # fmt: skip
        """ncclTopoAddGpuSub and ncclTopoAddGpu (topo.cc:511-519, 590-635), without MLOPart
        partitions: one DEV per physical GPU, its GPU under it by a LOC link."""
        if xgpu.get("mlopart") not in (None, "-1"):
            raise bad(f"{xgpu.where()}: MLOPart partitions are not modelled")
        dev = self.s.node(DEV, topo_id(sid, busid))
        if dev is None:
            dev = self.s.create(DEV, topo_id(sid, busid))
            dev.device = pci_device(xpci)
            dev.sm = xgpu.int("sm")
            dev.dev = xgpu.int("dev")
            dev.busid = xpci.get("busid") or ""
            connect(dev, parent, LINK_PCI, bw)
            connect(parent, dev, LINK_PCI, bw)
        gpu = self.s.create(GPU, topo_id(sid, (dev.ngpus << 40) | (busid & ((1 << 40) - 1))))
        gpu.rank = xgpu.int("rank")
        gpu.sm = xgpu.int("sm")
        gpu.dev = xgpu.int("dev")
        gpu.gdr = xgpu.int("gdr")
        gpu.parent = dev
        gpu.busid = dev.busid
        connect(dev, gpu, LINK_LOC, LOC_BW)
        connect(gpu, dev, LINK_LOC, LOC_BW)
        dev.ngpus += 1

    def add_pci(self, x: XmlNode, parent: Node, sid: int, numa: int) -> None:
        """ncclTopoAddPci (topo.cc:637-702)."""
        type_ = kv(x.text("class"), PCI_CLASS, PCI)
        busid = bus_id(x.text("busid"))
        width = x.int("link_width")
        speed = kv(x.text("link_speed"), PCI_GEN, 60)
        bw = f32((width or 16) * speed / 80.0)
        for g in (s for s in x.subs if s.name == "gpu"):
            if g.get("rank") is None:
                return  # topo.cc:665: a GPU outside the communicator
            self.add_gpu(x, g, parent, sid, busid, bw)
        node = None
        xnic = x.sub("nic")
        if xnic is not None:
            nid = topo_id(sid, (numa << 56) + busid)
            nic = self.s.node(NIC, nid)
            if nic is None:
                nic = node = self.s.create(NIC, nid)
                nic.busid = x.get("busid") or ""
            self.add_nic(xnic, nic, sid)
        elif type_ == PCI:
            node = self.s.create(PCI, topo_id(sid, busid))
            node.device = pci_device(x)
            node.busid = x.get("busid") or ""
            for sub in x.subs:
                if sub.name == "pci":
                    self.add_pci(sub, node, sid, numa)
        if node is not None:
            connect(node, parent, LINK_PCI, bw)
            connect(parent, node, LINK_PCI, bw)

    def add_cpu(self, x: XmlNode) -> None:
        """ncclTopoAddCpu (topo.cc:726-776)."""
        numa = x.int("numaid")
        sid = self.system_id(x)
        cpu = self.s.create(CPU, topo_id(sid, numa))
        cpu.arch = kv(x.text("arch"), CPU_ARCH, 0)
        if cpu.arch == ARCH_X86:
            cpu.vendor = kv(x.text("vendor"), CPU_VENDOR, 0)
            if cpu.vendor == VENDOR_INTEL:
                family, model = x.int("familyid"), x.int("modelid")
                cpu.model = (
                    MODEL_ERP if family == 6 and model >= 0xCF else
                    MODEL_SRP if family == 6 and model >= 0x8F else
                    MODEL_SKL if family == 6 and model >= 0x55 else
                    MODEL_BDW
                )  # fmt: skip
            elif cpu.vendor == VENDOR_ZHAOXIN:
                family, model = x.int("familyid"), x.int("modelid")
                if family == 7 and model == 0x5B:
                    cpu.model = MODEL_YONGFENG
        for sub in x.subs:
            if sub.name == "pci":
                self.add_pci(sub, cpu, sid, numa)
            if sub.name == "nic":
                nid = topo_id(sid, numa << 56)
                nic = self.s.node(NIC, nid)
                if nic is None:
                    nic = self.s.create(NIC, nid)
                    connect(cpu, nic, LINK_PCI, LOC_BW)
                    connect(nic, cpu, LINK_PCI, LOC_BW)
                self.add_nic(sub, nic, sid)

    def walk(self, x: XmlNode, leaf: str, visit, busid: str | None, sid: int) -> None:
        """The recursion shared by ncclTopoAddNvLinks, AddC2c and AddPciLinks (topo.cc:811-956):
        each `leaf` element with the bus id of its nearest ancestor that has one."""
        if x.name == leaf:
            visit(x, busid, sid)
            return
        if x.name == "cpu":
            sid = self.system_id(x)
        for sub in x.subs:
            self.walk(sub, leaf, visit, x.get("busid") or busid, sid)

    def gpu_dev(self, xgpu: XmlNode, busid: str | None, sid: int) -> Node:
        """ncclTopoGetGpuDevNode (topo.cc:778-790), for the first GPU of its <pci> only
        (ncclTopoXmlIsPrimaryGpuForDev, topo.cc:793-809)."""
        dev = self.s.node(DEV, topo_id(sid, bus_id(busid or "")))
        if dev is None:
            raise bad(f"{xgpu.where()}: an NVLink or C2C link from a GPU that has no rank")
        return dev

    def nvlink(self, x: XmlNode, busid: str | None, sid: int) -> None:
        """ncclTopoAddNvLinks (topo.cc:811-871)."""
        if x.parent is None or x.parent.name != "gpu":
            raise bad(f"{x.where()} is not inside a <gpu>")
        if x.parent.get("rank") is None or _sibling_before(x.parent):
            return
        dev = self.gpu_dev(x.parent, busid, sid)
        count = x.int("count")
        target_type = kv(x.text("tclass"), PCI_CLASS, PCI)
        bw = nvlink_bw(dev.sm)
        if target_type == GPU:  # one direction: the other GPU's <nvlink> adds the way back
            rem = self.s.node(DEV, topo_id(sid, bus_id(x.text("target"))))
            if rem is not None:
                connect(dev, rem, LINK_NVL, f32(count * bw))
            return
        if target_type == CPU:  # an IBM POWER CPU's NVLink
            remote = find_local_cpu(dev)
        else:  # every NVSwitch is the one NVS node (topo.cc:849-853)
            remote = self.s.nodes[NVS][0] if self.s.nodes[NVS] else self.s.create(NVS, 0)
        if remote is not None:
            connect(dev, remote, LINK_NVL, f32(count * bw))
            connect(remote, dev, LINK_NVL, f32(count * bw))

    def c2c(self, x: XmlNode, busid: str | None, sid: int) -> None:
        """ncclTopoAddC2c (topo.cc:905-956), one DEV per GPU (no C2C bridge node)."""
        if x.parent is None or x.parent.name != "gpu":
            raise bad(f"{x.where()} is not inside a <gpu>")
        if x.parent.get("rank") is None or _sibling_before(x.parent):
            return
        dev = self.gpu_dev(x.parent, busid, sid)
        bw = f32(x.int("bw") * x.int("count") / 1000.0)
        cpu = find_local_cpu(dev)
        if cpu is not None:
            connect(dev, cpu, LINK_C2C, bw)
            connect(cpu, dev, LINK_C2C, bw)

    def pcilink(self, x: XmlNode, busid: str | None, sid: int) -> None:
        """ncclTopoAddPciLinks (topo.cc:873-903)."""
        pci = self.s.node(PCI, topo_id(sid, bus_id(busid or "")))
        if pci is None:
            raise bad(f"{x.where()}: its parent is not a PCI switch NCCL knows")
        remote = self.s.node(PCI, topo_id(sid, bus_id(x.text("target"))))
        if remote is not None:
            connect(pci, remote, LINK_LOC, LOC_BW)

    def build(self) -> System:
        """ncclTopoGetSystemFromXml (topo.cc:958-990)."""
        for sub in self.top.subs:
            if sub.name == "cpu":
                self.add_cpu(sub)
        self.walk(self.top, "nvlink", self.nvlink, None, 0)
        self.walk(self.top, "c2c", self.c2c, None, 0)
        self.walk(self.top, "pcilink", self.pcilink, None, 0)
        flatten_bcm_switches(self.s)
        connect_cpus(self.s)
        for cpu in self.s.nodes[CPU]:
            _sort(cpu, None)
        if not self.s.gpus:
            raise bad("has no <gpu> with a rank attribute: NCCL has nothing to connect")
        return self.s


def _sibling_before(xgpu: XmlNode) -> bool:
    """Not the first <gpu> of its <pci> (topo.cc:793-809, without MLOPart)."""
    siblings = [s for s in xgpu.parent.subs if s.name == "gpu"] if xgpu.parent else []
    return bool(siblings) and siblings[0] is not xgpu


def _bcm_gen(device: int, level: int) -> int:
    """getBcmGen (topo.cc:199-203)."""
    if device & 0xFFFFFFFFFFFFF000 == 0x1000C0101000A000:
        return 4
    if device & 0xFFFFFFFFFFFFF000 == 0x1000C03010000000 | level * 0x1000:
        return 5
    return 0


def flatten_bcm_switches(s: System) -> None:
    """ncclTopoFlattenBcmSwitches (topo.cc:204-268): a Broadcom Gen4/Gen5 switch that shows
    itself as two levels becomes one."""
    restart = True
    while restart:
        restart = False
        for sw in s.nodes[PCI]:
            gen = _bcm_gen(sw.device, 0)
            if not gen:
                continue
            subs = [
                lk.rem
                for lk in sw.links
                if lk.rem.type == PCI and _bcm_gen(lk.rem.device, 1) == gen
            ]
            sw.links = [lk for lk in sw.links if lk.rem not in subs]
            for sub in subs:
                for lk in sub.links:
                    if lk.rem is sw:
                        continue
                    sw.links.append(lk)
                    for rl in lk.rem.links:
                        if rl.rem is sub:
                            rl.rem = sw
                            break
                _remove(s, sub)
            sw.device |= 0xFFFF
            restart = True
            break


def _remove(s: System, node: Node) -> None:
    """ncclTopoRemoveNode (topo.cc:135-166)."""
    for nodes in s.nodes:
        for n in nodes:
            n.links = [lk for lk in n.links if lk.rem is not node]
    s.nodes[node.type].remove(node)


def connect_cpus(s: System) -> None:
    """ncclTopoConnectCpus (topo.cc:270-283): every CPU to every other of its system."""
    for c1 in s.nodes[CPU]:
        for c2 in s.nodes[CPU]:
            if c1 is not c2 and c1.id >> 56 == c2.id >> 56:
                connect(c1, c2, LINK_SYS, inter_cpu_bw(c1))


def _sort(node: Node, up: Node | None) -> None:
    """ncclTopoSort (topo.cc:345-375): NVLinks, then PCI down, then the PCI link up, then SYS.
    The up link moves to the end of the links (the C loop stops at the first empty slot)."""
    if up is not None:
        i = next(i for i, lk in enumerate(node.links) if lk.rem is up)
        node.links.append(node.links.pop(i))
    for lk in list(node.links):
        if lk.type == LINK_PCI and lk.rem is not up:
            _sort(lk.rem, node)


def from_xml(top: XmlNode) -> System:
    """A parsed topology file as NCCL's system (topo.cc:958-990)."""
    return _Builder(top).build()
