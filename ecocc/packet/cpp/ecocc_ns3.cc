// ecocc packet-level back end: compiled into the Python process with cppyy.cppdef
// (ecocc/packet/_child.py), one simulation per process.
//
// What is here
//   EcoStampTag     packet tag a router writes into forward data packets: the AECP/CLTCP
//                   pre-allocation rate factor r (min along the path) and the available
//                   bandwidth (min along the path, for TCP Symbiosis), packets/s, float32.
//   EcoHeader       20-byte header our rate-based senders put on data packets and receivers
//                   on ACKs: sequence number, send time, echoed r and available bandwidth.
//   EcoQueueDisc    drop-tail FIFO with counters (offered, dropped, departed, exact queue
//                   area) and, in AECP mode, the router of eq. (49) of 004 / (47) of 001:
//                   every T2 seconds  r <- r exp(beta T2 (1 - (y + (q - q0)/T)/C)) with y
//                   the mean offered arrival rate over the last interval and q the queue
//                   (packets) at the sampling instant; r stamped as min(r, stamped).
//                   In Symbiosis mode it stamps C - y (the link's unused capacity).
//   EcoSender       rate-based sender over UDP (paced), per-mode control law once per RTT:
//                   AECP eq. (48) of 004; PE-TCP eq. (6)-(11) of 000; Symbiosis eq. (10) of 002.
//   EcoReceiver     answers every data packet with one ACK (48-byte IP packet) echoing the
//                   header and the router stamps.
//   EcoCbr          unresponsive UDP source with a piecewise-constant rate (constant and
//                   scheduled cross traffic).
//   EcoDriver       builds the topology from links and routes, installs everything, runs,
//                   and samples cumulative counters every sample period.  A reverse-path
//                   flow sends its data over its links' reverse direction (and its ACKs over
//                   the forward one); with reverse-path flows every link's reverse direction
//                   gets its own EcoQueueDisc (same buffer, its own rate factor), so each
//                   flow's data meets a stamping router on its own forward direction only.
//                   Routers stamp data packets only (ACKs carry no stamp to the sender: the
//                   receiver echoes the stamp of the data packet in the ACK header).
//
// Units: seconds, packets, packets/s, bits/s only for ns-3 DataRate.

#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/applications-module.h"
#include "ns3/traffic-control-module.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace ns3 {

// ---------------------------------------------------------------------------------------
// tag and header
// ---------------------------------------------------------------------------------------

class EcoStampTag : public Tag {
 public:
  // +inf: no router has stamped (a stamp is the minimum along the path)
  float r = std::numeric_limits<float>::infinity();      // rate factor, packets/s
  float avail = std::numeric_limits<float>::infinity();  // unused capacity, packets/s
  static TypeId GetTypeId() {
    static TypeId tid = TypeId("ns3::EcoStampTag").SetParent<Tag>().SetGroupName("Ecocc").AddConstructor<EcoStampTag>();
    return tid;
  }
  TypeId GetInstanceTypeId() const override { return GetTypeId(); }
  uint32_t GetSerializedSize() const override { return 8; }
  void Serialize(TagBuffer i) const override {
    uint32_t u;
    std::memcpy(&u, &r, 4);
    i.WriteU32(u);
    std::memcpy(&u, &avail, 4);
    i.WriteU32(u);
  }
  void Deserialize(TagBuffer i) override {
    uint32_t u = i.ReadU32();
    std::memcpy(&r, &u, 4);
    u = i.ReadU32();
    std::memcpy(&avail, &u, 4);
  }
  void Print(std::ostream& os) const override { os << "r=" << r << " avail=" << avail; }
};

class EcoHeader : public Header {
 public:
  uint32_t seq = 0;
  double sendTime = 0.0;  // s
  float r = std::numeric_limits<float>::infinity();      // echoed rate factor (packets/s)
  float avail = std::numeric_limits<float>::infinity();  // echoed unused capacity (packets/s)
  static TypeId GetTypeId() {
    static TypeId tid = TypeId("ns3::EcoHeader").SetParent<Header>().SetGroupName("Ecocc").AddConstructor<EcoHeader>();
    return tid;
  }
  TypeId GetInstanceTypeId() const override { return GetTypeId(); }
  uint32_t GetSerializedSize() const override { return 20; }
  void Serialize(Buffer::Iterator i) const override {
    i.WriteHtonU32(seq);
    uint64_t b;
    std::memcpy(&b, &sendTime, 8);
    i.WriteHtonU64(b);
    uint32_t u;
    std::memcpy(&u, &r, 4);
    i.WriteHtonU32(u);
    std::memcpy(&u, &avail, 4);
    i.WriteHtonU32(u);
  }
  uint32_t Deserialize(Buffer::Iterator i) override {
    seq = i.ReadNtohU32();
    uint64_t b = i.ReadNtohU64();
    std::memcpy(&sendTime, &b, 8);
    uint32_t u = i.ReadNtohU32();
    std::memcpy(&r, &u, 4);
    u = i.ReadNtohU32();
    std::memcpy(&avail, &u, 4);
    return 20;
  }
  void Print(std::ostream& os) const override { os << "seq=" << seq << " t=" << sendTime; }
};


// ---------------------------------------------------------------------------------------
// router: drop-tail FIFO with counters, AECP rate factor, Symbiosis available bandwidth
// ---------------------------------------------------------------------------------------

enum EcoQueueMode { ECO_Q_PLAIN = 0, ECO_Q_AECP = 1, ECO_Q_AVAIL = 2 };

class EcoQueueDisc : public QueueDisc {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = TypeId("ns3::EcoQueueDisc")
                            .SetParent<QueueDisc>()
                            .SetGroupName("Ecocc")
                            .AddConstructor<EcoQueueDisc>()
                            .AddAttribute("MaxSize", "Drop-tail limit", QueueSizeValue(QueueSize("1000p")),
                                          MakeQueueSizeAccessor(&QueueDisc::SetMaxSize, &QueueDisc::GetMaxSize),
                                          MakeQueueSizeChecker());
    return tid;
  }
  EcoQueueDisc() : QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE) {}

  // configuration (set before the simulation starts)
  int mode = ECO_Q_PLAIN;
  double capacityPps = 1.0;   // C (packets/s of packetBytes-byte packets)
  double packetBytes = 1000;  // bytes per packet for converting offered bytes to packets
  double period = 0.1;        // T2 (s)
  double beta = 1.0;          // 1/s
  double timeConst = 2.0;     // T (s)
  double q0 = 100.0;          // packets
  double r = 1.0;             // current rate factor (packets/s)
  bool availValid = false;    // Symbiosis mode: a first interval has been measured
  double availPps = 0.0;      // current unused capacity C - y (packets/s), Symbiosis mode

  // counters (cumulative)
  double offeredPkts = 0, droppedPkts = 0, departedPkts = 0, departedBytes = 0;
  double queueArea = 0;  // integral of the queue (packets) over time (packet-seconds)
  double intervalBytes = 0;
  double lastChange = 0;
  uint32_t nUpdates = 0;
  // RED on the instantaneous queue, as the fluid Reno model (ecocc.models.reno.red_probability):
  // drop probability 0 below minTh, linear to pMax at maxTh, 1 above
  bool red = false;
  double redMin = 50, redMax = 550, redPmax = 0.1;
  Ptr<UniformRandomVariable> uv;

  void StartControl() {
    if (mode != ECO_Q_PLAIN) Simulator::Schedule(Seconds(period), &EcoQueueDisc::Update, this);
  }
  double QueuePkts() const { return (double)GetNPackets(); }
  void Touch() {
    double now = Simulator::Now().GetSeconds();
    queueArea += QueuePkts() * (now - lastChange);
    lastChange = now;
  }

 private:
  void Update() {
    double y = intervalBytes / packetBytes / period;  // mean offered arrival rate (packets/s)
    intervalBytes = 0;
    if (mode == ECO_Q_AECP) {
      r = r * std::exp(beta * period * (1.0 - (y + (QueuePkts() - q0) / timeConst) / capacityPps));
    } else if (mode == ECO_Q_AVAIL) {
      availPps = capacityPps - y;
      availValid = true;
    }
    nUpdates++;
    Simulator::Schedule(Seconds(period), &EcoQueueDisc::Update, this);
  }
  bool DoEnqueue(Ptr<QueueDiscItem> item) override {
    Touch();
    double bytes = item->GetSize();
    offeredPkts += bytes / packetBytes;
    intervalBytes += bytes;
    if (red) {
      double q = QueuePkts();
      double pr = q < redMin ? 0.0 : (q < redMax ? redPmax * (q - redMin) / (redMax - redMin) : 1.0);
      if (!uv) uv = CreateObject<UniformRandomVariable>();
      if (pr > 0 && uv->GetValue() < pr) {
        droppedPkts += bytes / packetBytes;
        DropBeforeEnqueue(item, "red");
        return false;
      }
    }
    if (GetCurrentSize() + item > GetMaxSize()) {
      droppedPkts += bytes / packetBytes;
      DropBeforeEnqueue(item, "drop-tail limit");
      return false;
    }
    if (mode != ECO_Q_PLAIN && bytes >= 0.5 * packetBytes) {  // data packets only, not ACKs
      Ptr<Packet> p = item->GetPacket();
      EcoStampTag tag;
      if (!p->RemovePacketTag(tag)) tag = EcoStampTag();
      if (mode == ECO_Q_AECP) {
        tag.r = std::min(tag.r, (float)r);  // min(r_l, stamped): the most congested link wins
      } else if (availValid) {
        tag.avail = std::min(tag.avail, (float)availPps);
      }
      p->AddPacketTag(tag);
    }
    return GetInternalQueue(0)->Enqueue(item);
  }
  Ptr<QueueDiscItem> DoDequeue() override {
    Touch();
    Ptr<QueueDiscItem> item = GetInternalQueue(0)->Dequeue();
    if (item) {
      departedPkts += item->GetSize() / packetBytes;
      departedBytes += item->GetSize();
    }
    return item;
  }
  bool CheckConfig() override {
    if (GetNQueueDiscClasses() > 0 || GetNPacketFilters() > 0) return false;
    if (GetNInternalQueues() == 0) {
      AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>("MaxSize", QueueSizeValue(GetMaxSize())));
    }
    return GetNInternalQueues() == 1;
  }
  void InitializeParams() override {}
};

// ---------------------------------------------------------------------------------------
// receiver: one ACK per data packet, echoing the header and the router stamps
// ---------------------------------------------------------------------------------------

class EcoReceiver : public Application {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = TypeId("ns3::EcoReceiver").SetParent<Application>().SetGroupName("Ecocc").AddConstructor<EcoReceiver>();
    return tid;
  }
  uint16_t port = 9;
  double received = 0;
  void StartApplication() override {
    m_sock = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
    m_sock->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
    m_sock->SetRecvCallback(MakeCallback(&EcoReceiver::HandleRead, this));
  }
  void StopApplication() override {
    if (m_sock) m_sock->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
  }

 private:
  Ptr<Socket> m_sock;
  void HandleRead(Ptr<Socket> s) {
    Address from;
    Ptr<Packet> p;
    while ((p = s->RecvFrom(from))) {
      EcoHeader h;
      p->RemoveHeader(h);
      EcoStampTag tag;
      if (p->PeekPacketTag(tag)) {
        h.r = tag.r;
        h.avail = tag.avail;
      }
      received += 1;
      Ptr<Packet> ack = Create<Packet>(0);
      ack->AddHeader(h);
      s->SendTo(ack, 0, from);
    }
  }
};

// ---------------------------------------------------------------------------------------
// rate-based sender: AECP / PE-TCP / Symbiosis control laws, once per RTT
// ---------------------------------------------------------------------------------------

enum EcoSenderMode { ECO_S_AECP = 1, ECO_S_PETCP = 2, ECO_S_SYMB = 3 };

class EcoSender : public Application {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = TypeId("ns3::EcoSender").SetParent<Application>().SetGroupName("Ecocc").AddConstructor<EcoSender>();
    return tid;
  }
  // configuration
  int mode = ECO_S_AECP;
  Address peer;
  uint32_t packetBytes = 1000;  // IP packet size
  double rate = 10.0;           // current sending rate (packets/s)
  double maxRate = 1e9;         // safety cap (packets/s)
  // AECP
  double alpha = 2.0;
  // PE-TCP
  double a = 125.0, b = 1.0, T = 0.01;
  // Symbiosis
  double eps = 1.95, gamma = 0.9, K = 1.0, window = 1.0;
  double tauGiven = -1.0;  // Symbiosis tau_i (s): <= 0 -> the smallest RTT measured (002, after eq. 8)
  // state / statistics
  double nextUpdate = 0.0, lastRtt = 0.0, minRtt = 1e9, minGap = 1e9, lastAckTime = -1.0, srtt = 0.0;
  uint32_t nUpdates = 0, nAcks = 0;
  double lastFactor = -1.0, lastAvail = -1.0;

  void StartApplication() override {
    m_sock = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
    m_sock->Bind();
    m_sock->Connect(peer);
    m_sock->SetRecvCallback(MakeCallback(&EcoSender::HandleAck, this));
    m_running = true;
    nextUpdate = Simulator::Now().GetSeconds();
    m_marked = 0;
    m_markedValid = false;
    SendNext();
  }
  void StopApplication() override {
    m_running = false;
    Simulator::Cancel(m_sendEv);
  }

 private:
  Ptr<Socket> m_sock;
  EventId m_sendEv;
  bool m_running = false;
  uint32_t m_seq = 0;
  double m_lastSend = -1.0;
  // PE-TCP: the marked packet (hash table entry of Table 1 of 000): its sequence number, the
  // rate and RTT known when it was sent
  uint32_t m_marked = 0;
  bool m_markedValid = false;
  double m_markedX = 0.0, m_markedTau = 0.0;

  void SendOne() {
    EcoHeader h;
    h.seq = m_seq++;
    h.sendTime = Simulator::Now().GetSeconds();
    uint32_t payload = packetBytes > 48 ? packetBytes - 48 : 0;  // 20 IP + 8 UDP + 20 EcoHeader
    Ptr<Packet> p = Create<Packet>(payload);
    p->AddHeader(h);
    m_sock->Send(p);
  }
  void SendNext() {
    if (!m_running) return;
    double now = Simulator::Now().GetSeconds();
    if (mode == ECO_S_PETCP) {
      if (!m_markedValid) {  // Table 1 of 000: store x and tau with the sequence number
        m_marked = m_seq;
        m_markedValid = true;
        m_markedX = rate;
        m_markedTau = lastRtt;
      }
      SendOne();  // packet pair: two back to back every 2/x
      SendOne();
      m_lastSend = now;
      m_sendEv = Simulator::Schedule(Seconds(2.0 / rate), &EcoSender::SendNext, this);
    } else {
      SendOne();
      m_lastSend = now;
      m_sendEv = Simulator::Schedule(Seconds(1.0 / rate), &EcoSender::SendNext, this);
    }
  }
  void Repace() {  // a new rate: the next packet leaves 1/x (2/x for pairs) after the last one
    if (!m_running) return;
    Simulator::Cancel(m_sendEv);
    double now = Simulator::Now().GetSeconds();
    double gap = (mode == ECO_S_PETCP ? 2.0 : 1.0) / rate;
    double next = std::max(now, m_lastSend + gap);
    m_sendEv = Simulator::Schedule(Seconds(next - now), &EcoSender::SendNext, this);
  }
  void SetRate(double x) {
    if (!(x > 1e-3)) x = 1e-3;  // a sender cannot send a negative rate; floor 1e-3 packets/s
    if (x > maxRate) x = maxRate;
    rate = x;
    Repace();
  }
  void HandleAck(Ptr<Socket> s) {
    Ptr<Packet> p;
    while ((p = s->Recv())) {
      EcoHeader h;
      p->RemoveHeader(h);
      double now = Simulator::Now().GetSeconds();
      double tau = now - h.sendTime;
      nAcks++;
      if (lastAckTime >= 0 && now - lastAckTime > 0) minGap = std::min(minGap, now - lastAckTime);
      lastAckTime = now;
      minRtt = std::min(minRtt, tau);
      lastFactor = h.r;
      lastAvail = h.avail;
      srtt = srtt > 0 ? 0.875 * srtt + 0.125 * tau : tau;  // smoothed RTT (RFC 6298 gain 1/8)
      if (mode == ECO_S_AECP) {
        // eq. (48) of 004 with T1 = tau: x <- x^(1 - alpha tau) r^(alpha tau), once per RTT, r the
        // factor echoed by this ACK (stamped when its packet crossed the routers)
        if (now >= nextUpdate && std::isfinite(h.r) && h.r > 0) {
          double g = alpha * tau;
          double lnx = (1.0 - g) * std::log(rate) + g * std::log((double)h.r);
          nextUpdate = now + tau;
          nUpdates++;
          SetRate(std::exp(std::min(lnx, 50.0)));
        }
      } else if (mode == ECO_S_PETCP) {
        if (m_markedValid && h.seq >= m_marked) {
          // eq. (6)-(11) of 000: B = 1/tau_Delta (packet pair), tau_l = RTT stored with the packet
          double tauD = minGap < 1e8 ? minGap : tau;
          double tauL = m_markedTau > 0 ? m_markedTau : tau;
          double x = m_markedX;
          double xn;
          // tau > tau_min: queue nonempty. Less than half a packet of queueing delay counts as
          // empty (a packet-level RTT never equals tau_min exactly).
          if (tau > minRtt + 0.5 * tauD) {
            xn = x + a * tau + b * tau * x * (1.0 - (2.0 * tau - tauL) / tau - (tau - minRtt) / T);
          } else {
            xn = x + a * tau + b * tau * x * (1.0 - x * tauD);
          }
          lastRtt = tau;
          nUpdates++;
          m_markedValid = false;  // the next packet sent is marked
          SetRate(xn);
        } else if (lastRtt == 0.0) {
          lastRtt = tau;
        }
      } else if (mode == ECO_S_SYMB) {
        // eq. (10) of 002 once per RTT, with w(0) the current window and t the measured RTT;
        // tau_i of eq. (10) is the propagation RTT (the smallest RTT measured).  A = the unused
        // capacity the routers stamped (min along the path) + this flow's own rate (= K - the other
        // flows' rates, eq. 17), clipped to [0, K].  A window protocol: the window is sent over
        // one (smoothed, measured) RTT, paced at w / srtt, so that a standing queue slows it down.
        if (now >= nextUpdate) {
          double tp = tauGiven > 0 ? tauGiven : minRtt;
          double A = std::isfinite(h.avail) ? (double)h.avail + rate : K;
          A = std::min(std::max(A, 0.0), K);
          double growth = eps * (1.0 - gamma * (1.0 - A / K));
          double W = (K - gamma * (K - A)) * tp;
          double em = std::exp(-growth * tau);
          window = window * W / (window * (1.0 - em) + W * em);
          nextUpdate = now + tau;
          nUpdates++;
        }
        double want = window / srtt;
        if (std::fabs(want - rate) > 0.01 * rate) SetRate(want);
      }
    }
  }
};

// ---------------------------------------------------------------------------------------
// unresponsive UDP source with a piecewise-constant rate
// ---------------------------------------------------------------------------------------

class EcoCbr : public Application {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = TypeId("ns3::EcoCbr").SetParent<Application>().SetGroupName("Ecocc").AddConstructor<EcoCbr>();
    return tid;
  }
  Address peer;
  uint32_t packetBytes = 1000;
  std::vector<double> times, rates;  // rate rates[k] (packets/s) from times[k] on
  double sent = 0;
  void StartApplication() override {
    m_sock = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
    m_sock->Bind();
    m_sock->Connect(peer);
    for (size_t k = 0; k < times.size(); k++) {
      double dt = times[k] - Simulator::Now().GetSeconds();
      Simulator::Schedule(Seconds(std::max(dt, 0.0)), &EcoCbr::SetRate, this, rates[k]);
    }
  }
  void StopApplication() override { Simulator::Cancel(m_ev); m_rate = 0; }

 private:
  Ptr<Socket> m_sock;
  EventId m_ev;
  double m_rate = 0.0;
  void SetRate(double x) {
    m_rate = x;
    Simulator::Cancel(m_ev);
    if (m_rate > 0) Send();
  }
  void Send() {
    uint32_t payload = packetBytes > 28 ? packetBytes - 28 : 0;
    m_sock->Send(Create<Packet>(payload));
    sent += 1;
    m_ev = Simulator::Schedule(Seconds(1.0 / m_rate), &EcoCbr::Send, this);
  }
};


// ---------------------------------------------------------------------------------------
// driver: topology from links and routes, applications, sampling
// ---------------------------------------------------------------------------------------

static void EcoCount(double* counter, double minBytes, Ptr<const Packet> p) {
  if (p->GetSize() >= minBytes) *counter += 1.0;
}

class EcoDriver {
 public:
  // global settings
  double packetBytes = 1000;   // IP packet size (bytes)
  double sampleDt = 0.1;       // sampling period of the cumulative counters (s)
  double accessFactor = 10;    // access links run at this multiple of the fastest link
  uint32_t seed = 1;
  std::string protocol = "aecp";  // aecp | petcp | symbiosis | tcp:<ns-3 TypeId name>
  // model parameters
  double alpha = 2.0, beta = 1.0, Tq = 2.0, T2 = 0.1;           // AECP (q0, r0 per link)
  double peA = 125.0, peB = 1.0, peT = 0.01;                     // PE-TCP
  double eps = 1.95, gamma = 0.9;                                // Symbiosis
  bool symbGivenTau = false;  // Symbiosis: tau_i = the flow's propagation RTT instead of the measured minimum
  double maxRateFactor = 10.0;
  bool red = false;                                              // RED on every link (Reno aqm = "red")
  double redMin = 50, redMax = 550, redPmax = 0.1;  // rate-based senders are capped at this multiple of the fastest link

  // samples (filled by Run): times and row-major (time x flow / time x link) cumulative counters
  std::vector<double> t, flowSent, flowRecv, flowCtrl, linkOffered, linkDropped, linkDeparted, linkQueue,
      linkArea, linkSignal;
  std::vector<double> flowUpdates, flowMinRtt;
  // the reverse direction of every link (filled only when there are reverse-path flows)
  std::vector<double> revOffered, revDropped, revDeparted, revArea;
  std::string error;

  EcoDriver() {
    EcoStampTag::GetTypeId();
    EcoHeader::GetTypeId();
    EcoQueueDisc::GetTypeId();
    EcoSender::GetTypeId();
    EcoReceiver::GetTypeId();
    EcoCbr::GetTypeId();
  }

  int AddLink(double capPps, double delayS, double bufferPkts, double q0, double r0) {
    m_links.push_back({capPps, delayS, bufferPkts, q0, r0});
    return (int)m_links.size() - 1;
  }
  int AddFlow(const std::vector<int>& route, double rttS, double startS, double stopS, double x0, double K) {
    m_flows.push_back({route, rttS, startS, stopS, x0, K, false});
    return (int)m_flows.size() - 1;
  }
  // a reverse-path flow: route given in the links' forward order, its data travels it backwards
  int AddReverseFlow(const std::vector<int>& route, double rttS, double startS, double stopS, double x0, double K) {
    m_flows.push_back({route, rttS, startS, stopS, x0, K, true});
    m_hasReverse = true;
    return (int)m_flows.size() - 1;
  }
  void AddCbr(int link, const std::vector<double>& times, const std::vector<double>& rates) {
    m_cross.push_back({link, 0, times, rates, 0, 0.0, 0.0, 0.0});
  }
  void AddOnOff(int link, int n, double meanOn, double meanOff, double peakPps) {
    m_cross.push_back({link, 1, {}, {}, n, meanOn, meanOff, peakPps});
  }

  bool Build() {
    RngSeedManager::SetSeed(seed);
    const int L = (int)m_links.size();
    // routers: link l runs from end 2l to end 2l+1; consecutive links of a route share a router
    m_parent.resize(2 * L);
    for (int i = 0; i < 2 * L; i++) m_parent[i] = i;
    for (auto& f : m_flows)
      for (size_t k = 0; k + 1 < f.route.size(); k++) Union(2 * f.route[k] + 1, 2 * f.route[k + 1]);
    std::map<int, int> rootToNode;
    for (int i = 0; i < 2 * L; i++) {
      int r = Find(i);
      if (!rootToNode.count(r)) rootToNode[r] = (int)rootToNode.size();
    }
    for (int l = 0; l < L; l++)
      if (Find(2 * l) == Find(2 * l + 1)) { error = "a route makes link " + std::to_string(l) + " a loop"; return false; }
    m_routers.Create(rootToNode.size());
    double maxCap = 0;
    for (auto& lk : m_links) maxCap = std::max(maxCap, lk.cap);
    // line rate: C packets/s of packetBytes-byte IP packets plus the 2-byte PPP header of the
    // point-to-point device, so that IP packets are served at exactly C
    const double bitsPerPkt = 8.0 * (packetBytes + 2.0);
    const double accessBps = accessFactor * maxCap * bitsPerPkt;

    InternetStackHelper stack;
    bool tcp = protocol.rfind("tcp:", 0) == 0;
    if (tcp) {
      std::string tname = protocol.substr(4);
      TypeId tid;
      if (!TypeId::LookupByNameFailSafe(tname, &tid)) { error = "unknown ns-3 TCP type " + tname; return false; }
      Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(tid));
      Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue((uint32_t)packetBytes - 40));
      Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));  // 20-byte TCP header
      Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1u << 26));
      Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1u << 26));
    }
    stack.Install(m_routers);

    PointToPointHelper p2p;
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));  // the backlog sits in the queue disc
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.0");
    TrafficControlHelper fifo;
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, 1000000)));

    m_qd.resize(L);
    for (int l = 0; l < L; l++) {
      auto& lk = m_links[l];
      p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate((uint64_t)std::llround(lk.cap * bitsPerPkt))));
      p2p.SetChannelAttribute("Delay", TimeValue(Seconds(lk.delay)));
      Ptr<Node> a = m_routers.Get(rootToNode[Find(2 * l)]);
      Ptr<Node> b = m_routers.Get(rootToNode[Find(2 * l + 1)]);
      NetDeviceContainer d = p2p.Install(a, b);
      TrafficControlHelper eco;
      eco.SetRootQueueDisc("ns3::EcoQueueDisc", "MaxSize",
                           QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, (uint32_t)lk.buffer)));
      QueueDiscContainer qc = eco.Install(d.Get(0));  // forward direction
      if (m_hasReverse) {  // the reverse direction carries reverse-path flows' data: a router of its own
        QueueDiscContainer qr = eco.Install(d.Get(1));
        Ptr<EcoQueueDisc> rq = DynamicCast<EcoQueueDisc>(qr.Get(0));
        ConfigureQueue(rq, lk);
        m_qdRev.push_back(rq);
      } else {
        fifo.Install(d.Get(1));
      }
      Ptr<EcoQueueDisc> q = DynamicCast<EcoQueueDisc>(qc.Get(0));
      ConfigureQueue(q, lk);
      m_qd[l] = q;
      addr.Assign(d);
      addr.NewNetwork();
    }

    const int P = (int)m_flows.size();
    m_sent.assign(P, 0.0);
    m_recv.assign(P, 0.0);
    m_senders.assign(P, nullptr);
    uint16_t port = 5000;
    for (int j = 0; j < P; j++) {
      auto& f = m_flows[j];
      double D = 0;
      for (int l : f.route) D += m_links[l].delay;
      double dA = (0.5 * f.rtt - D) / 2.0;
      if (dA < -1e-12) {
        error = "flow " + std::to_string(j) + ": rtt/2 is below the one-way delay of its links";
        return false;
      }
      dA = std::max(dA, 0.0);
      NodeContainer hosts;
      hosts.Create(2);
      stack.Install(hosts);
      p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate((uint64_t)std::llround(accessBps))));
      p2p.SetChannelAttribute("Delay", TimeValue(Seconds(dA)));
      Ptr<Node> first = m_routers.Get(rootToNode[Find(2 * f.route.front())]);
      Ptr<Node> last = m_routers.Get(rootToNode[Find(2 * f.route.back() + 1)]);
      if (f.reverse) std::swap(first, last);  // data enters at the route's far end
      NetDeviceContainer ds = p2p.Install(hosts.Get(0), first);
      NetDeviceContainer dr = p2p.Install(last, hosts.Get(1));
      fifo.Install(ds);
      fifo.Install(dr);
      addr.Assign(ds);
      addr.NewNetwork();
      Ipv4InterfaceContainer ir = addr.Assign(dr);
      addr.NewNetwork();
      Ipv4Address raddr = ir.GetAddress(1);
      ds.Get(0)->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&EcoCount, &m_sent[j], 0.5 * packetBytes));
      dr.Get(1)->TraceConnectWithoutContext("PhyRxEnd", MakeBoundCallback(&EcoCount, &m_recv[j], 0.5 * packetBytes));
      double stop = std::isfinite(f.stop) ? f.stop : 1e9;
      if (tcp) {
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(raddr, port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue((uint32_t)packetBytes - 40));
        ApplicationContainer s = bulk.Install(hosts.Get(0));
        s.Start(Seconds(f.start));
        s.Stop(Seconds(stop));
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        sink.Install(hosts.Get(1)).Start(Seconds(0.0));
      } else {
        Ptr<EcoReceiver> rcv = CreateObject<EcoReceiver>();
        rcv->port = port;
        hosts.Get(1)->AddApplication(rcv);
        rcv->SetStartTime(Seconds(0.0));
        Ptr<EcoSender> snd = CreateObject<EcoSender>();
        snd->mode = protocol == "aecp" ? ECO_S_AECP : (protocol == "petcp" ? ECO_S_PETCP : ECO_S_SYMB);
        snd->peer = InetSocketAddress(raddr, port);
        snd->packetBytes = (uint32_t)packetBytes;
        snd->rate = f.x0;
        snd->maxRate = maxRateFactor * maxCap;
        snd->alpha = alpha;
        snd->a = peA;
        snd->b = peB;
        snd->T = peT;
        snd->eps = eps;
        snd->gamma = gamma;
        snd->K = f.K;
        snd->window = f.x0 * f.rtt;
        snd->tauGiven = symbGivenTau ? f.rtt : -1.0;
        hosts.Get(0)->AddApplication(snd);
        snd->SetStartTime(Seconds(f.start));
        snd->SetStopTime(Seconds(stop));
        m_senders[j] = PeekPointer(snd);
        m_senderPtrs.push_back(snd);
      }
      port++;
    }

    for (auto& c : m_cross) {
      NodeContainer hosts;
      hosts.Create(2);
      stack.Install(hosts);
      p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate((uint64_t)std::llround(accessBps))));
      p2p.SetChannelAttribute("Delay", TimeValue(Seconds(0.0)));
      Ptr<Node> a = m_routers.Get(rootToNode[Find(2 * c.link)]);
      Ptr<Node> b = m_routers.Get(rootToNode[Find(2 * c.link + 1)]);
      NetDeviceContainer ds = p2p.Install(hosts.Get(0), a);
      NetDeviceContainer dr = p2p.Install(b, hosts.Get(1));
      fifo.Install(ds);
      fifo.Install(dr);
      addr.Assign(ds);
      addr.NewNetwork();
      Ipv4InterfaceContainer ir = addr.Assign(dr);
      addr.NewNetwork();
      Ipv4Address raddr = ir.GetAddress(1);
      PacketSinkHelper sink("ns3::UdpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
      sink.Install(hosts.Get(1)).Start(Seconds(0.0));
      if (c.kind == 0) {
        Ptr<EcoCbr> cbr = CreateObject<EcoCbr>();
        cbr->peer = InetSocketAddress(raddr, port);
        cbr->packetBytes = (uint32_t)packetBytes;
        cbr->times = c.times;
        cbr->rates = c.rates;
        hosts.Get(0)->AddApplication(cbr);
        cbr->SetStartTime(Seconds(0.0));
      } else {
        OnOffHelper onoff("ns3::UdpSocketFactory", InetSocketAddress(raddr, port));
        onoff.SetAttribute("OnTime", StringValue("ns3::ExponentialRandomVariable[Mean=" + std::to_string(c.meanOn) + "]"));
        onoff.SetAttribute("OffTime", StringValue("ns3::ExponentialRandomVariable[Mean=" + std::to_string(c.meanOff) + "]"));
        onoff.SetAttribute("PacketSize", UintegerValue((uint32_t)packetBytes - 28));
        // OnOff paces its payload (packetBytes - 28 bytes) at DataRate while on
        onoff.SetAttribute("DataRate", DataRateValue(DataRate((uint64_t)std::llround(c.peak * 8.0 * (packetBytes - 28)))));
        for (int k = 0; k < c.n; k++) onoff.Install(hosts.Get(0)).Start(Seconds(0.0));
      }
      port++;
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    for (auto& q : m_qd) q->StartControl();
    for (auto& q : m_qdRev) q->StartControl();
    return true;
  }

  void Run(double tEnd, double progressEvery) {
    m_tEnd = tEnd;
    m_progressEvery = progressEvery;
    int n = (int)std::floor(tEnd / sampleDt + 1e-9);
    for (int k = 0; k <= n; k++) Simulator::Schedule(Seconds(k * sampleDt), &EcoDriver::Sample, this);
    if (std::fabs(n * sampleDt - tEnd) > 1e-9) Simulator::Schedule(Seconds(tEnd), &EcoDriver::Sample, this);
    if (progressEvery > 0) Simulator::Schedule(Seconds(0.0), &EcoDriver::Progress, this);
    Simulator::Stop(Seconds(tEnd) + NanoSeconds(1));
    Simulator::Run();
  }

 private:
  struct LinkSpec { double cap, delay, buffer, q0, r0; };
  struct FlowSpec { std::vector<int> route; double rtt, start, stop, x0, K; bool reverse; };
  struct CrossSpec { int link, kind; std::vector<double> times, rates; int n; double meanOn, meanOff, peak; };
  std::vector<LinkSpec> m_links;
  std::vector<FlowSpec> m_flows;
  std::vector<CrossSpec> m_cross;
  std::vector<int> m_parent;
  NodeContainer m_routers;
  std::vector<Ptr<EcoQueueDisc>> m_qd, m_qdRev;
  bool m_hasReverse = false;

  void ConfigureQueue(Ptr<EcoQueueDisc> q, const LinkSpec& lk) {
    q->capacityPps = lk.cap;
    q->packetBytes = packetBytes;
    q->period = T2;
    q->beta = beta;
    q->timeConst = Tq;
    q->q0 = lk.q0;
    q->r = lk.r0;
    q->mode = protocol == "aecp" ? ECO_Q_AECP : (protocol == "symbiosis" ? ECO_Q_AVAIL : ECO_Q_PLAIN);
    q->red = red;
    q->redMin = redMin;
    q->redMax = redMax;
    q->redPmax = redPmax;
  }
  std::vector<double> m_sent, m_recv;
  std::vector<EcoSender*> m_senders;
  std::vector<Ptr<EcoSender>> m_senderPtrs;
  double m_tEnd = 0, m_progressEvery = 0;

  int Find(int i) { while (m_parent[i] != i) i = m_parent[i] = m_parent[m_parent[i]]; return i; }
  void Union(int a, int b) { m_parent[Find(a)] = Find(b); }

  void Sample() {
    t.push_back(Simulator::Now().GetSeconds());
    for (size_t j = 0; j < m_flows.size(); j++) {
      flowSent.push_back(m_sent[j]);
      flowRecv.push_back(m_recv[j]);
      flowCtrl.push_back(m_senders[j] ? m_senders[j]->rate : std::nan(""));
    }
    for (auto& q : m_qd) {
      q->Touch();
      linkOffered.push_back(q->offeredPkts);
      linkDropped.push_back(q->droppedPkts);
      linkDeparted.push_back(q->departedPkts);
      linkQueue.push_back(q->QueuePkts());
      linkArea.push_back(q->queueArea);
      linkSignal.push_back(q->mode == ECO_Q_AECP ? q->r : (q->mode == ECO_Q_AVAIL ? q->availPps : std::nan("")));
    }
    for (auto& q : m_qdRev) {
      q->Touch();
      revOffered.push_back(q->offeredPkts);
      revDropped.push_back(q->droppedPkts);
      revDeparted.push_back(q->departedPkts);
      revArea.push_back(q->queueArea);
    }
  }
  void Progress() {
    std::printf("ECOCC_PROGRESS %.6f\n", Simulator::Now().GetSeconds());
    std::fflush(stdout);
    if (Simulator::Now().GetSeconds() + m_progressEvery <= m_tEnd + 1e-9)
      Simulator::Schedule(Seconds(m_progressEvery), &EcoDriver::Progress, this);
  }

 public:
  void Finish() {
    for (size_t j = 0; j < m_flows.size(); j++) {
      flowUpdates.push_back(m_senders[j] ? m_senders[j]->nUpdates : std::nan(""));
      flowMinRtt.push_back(m_senders[j] ? m_senders[j]->minRtt : std::nan(""));
    }
  }
};

}  // namespace ns3
