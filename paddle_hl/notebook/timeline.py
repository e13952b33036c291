"""The profiler's inline timeline and summary tables for Jupyter.

``Timeline(result)`` renders a ProfilerResult (from a live ``Profiler`` or from
``load_profiler_result``) as one self-contained HTML block: a canvas timeline with one row per
thread and event category (nested events stacked in lanes), zoom with the mouse wheel, pan by
dragging, double-click to reset, and a tooltip with the op name, duration and input shapes; then
the summary tables, sortable by clicking a column header. Everything (data, CSS, JavaScript) is
inline, so it works offline and in saved notebooks; no server and no external viewer.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import tempfile
import uuid

__all__ = []

# Rows per thread: the category groups drawn top to bottom, and the event types in each.
_GROUPS = (
    ("Steps", ("ProfileStep",)),
    ("Model", ("Dataloader", "Forward", "Backward", "Optimization")),
    ("User", ("PythonUserDefined", "PythonOp", "UserDefined")),
    ("Ops (forward)", ("Operator",)),
    ("Ops (backward)", ("Operator",)),
    ("Other", ("OperatorInner", "CudaRuntime", "Communication")),
)
_COLORS = {
    "ProfileStep": "#9e9e9e", "Dataloader": "#8d6e63", "Forward": "#42a5f5",
    "Backward": "#ef5350", "Optimization": "#66bb6a", "PythonUserDefined": "#ab47bc",
    "PythonOp": "#ab47bc", "UserDefined": "#7e57c2", "Operator": "#29b6f6",
    "Operator (backward)": "#ff8a65", "Kernel": "#26a69a", "Memcpy": "#ffca28",
    "Memset": "#ffa726", "OperatorInner": "#90a4ae", "CudaRuntime": "#bdbdbd",
    "Communication": "#d4e157",
}


def _group_of(e):
    if e.type == "Operator":
        return "Ops (backward)" if e.args.get("phase") == "backward" else "Ops (forward)"
    for g, types in _GROUPS:
        if e.type in types:
            return g
    return "Other"


def _detail(e):
    """Tooltip lines beyond name / category / duration (shapes, dtypes, phase)."""
    parts = []
    shapes = e.args.get("input_shapes")
    if shapes:
        parts.append("inputs: " + ", ".join(str(s) for s in shapes))
    dts = e.args.get("input_dtypes")
    if dts:
        parts.append("dtypes: " + ", ".join(str(d) for d in dts))
    outs = e.args.get("output_shapes")
    if outs:
        parts.append("outputs: " + ", ".join(str(s) for s in outs))
    if e.kernels:
        parts.append("gpu: %.3f us" % (sum(k.duration_ns for k in e.kernels) / 1e3))
    return "\n".join(parts)


def _layout(result, max_events):
    """Rows, lanes and the compact event table handed to the JavaScript."""
    result.trees()
    names = {}
    details = {"": 0}
    events = result.events
    if max_events is not None and len(events) > max_events:
        # keep the longest events: they carry the picture; tiny ones are sub-pixel anyway
        keep = sorted(events, key=lambda e: -e.duration_ns)[:max_events]
        events = sorted(keep, key=lambda e: (e.start_ns, -e.end_ns))
    t0 = min((e.start_ns for e in events), default=0)
    thread_names = result.extra_info.get("thread_names", {})
    row_index = {}
    rows = []
    by_row = {}
    for e in events:
        if e.device is None:
            tname = thread_names.get(str(e.tid), "")
            key = (0, str(e.tid), _group_of(e))
            label = f"{tname or 'thread'} (tid {e.tid})"
        else:
            key = (1, e.device, f"stream {e.args.get('stream', 0)}")
            label = e.device.upper()
        if key not in row_index:
            row_index[key] = None
            by_row[key] = []
            rows.append((key, label))
        by_row[key].append(e)
    order = {g: i for i, (g, _) in enumerate(_GROUPS)}
    rows.sort(key=lambda r: (r[0][0], r[0][1], order.get(r[0][2], 99), r[0][2]))
    out_rows = []
    out_events = []
    cats = []
    cat_index = {}
    prev_owner = None
    for key, label in rows:
        if key[:2] != prev_owner:  # a header row names the thread (or device) once
            prev_owner = key[:2]
            out_rows.append({"label": label, "group": "", "lanes": 0})
        ri = len(out_rows)
        lanes_end = []
        n_lanes = 1
        for e in by_row[key]:
            # lane = nesting depth within the row: the first lane whose last event has ended
            lane = 0
            while lane < len(lanes_end) and lanes_end[lane] > e.start_ns:
                lane += 1
            if lane == len(lanes_end):
                lanes_end.append(e.end_ns)
            else:
                lanes_end[lane] = e.end_ns
                del lanes_end[lane + 1:]
            n_lanes = max(n_lanes, len(lanes_end))
            cat = e.type
            if e.type == "Operator" and e.args.get("phase") == "backward":
                cat = "Operator (backward)"
            ci = cat_index.get(cat)
            if ci is None:
                ci = cat_index[cat] = len(cats)
                cats.append(cat)
            ni = names.get(e.name)
            if ni is None:
                ni = names[e.name] = len(names)
            d = _detail(e)
            di = details.get(d)
            if di is None:
                di = details[d] = len(details)
            out_events.append([ri, lane, round((e.start_ns - t0) / 1e3, 3),
                               round(e.duration_ns / 1e3, 3), ni, ci, di])
        out_rows.append({"label": label, "group": key[2], "lanes": n_lanes})
    return {
        "rows": out_rows, "events": out_events, "names": list(names),
        "details": list(details), "cats": cats,
        "colors": [_COLORS.get(c, "#78909c") for c in cats],
        "dropped": len(result.events) - len(events),
    }


# Colours come from JupyterLab's theme variables (fallbacks: a light page), so the timeline and
# its tables read in light and dark themes alike; the canvas reads the same variables.
_CSS = """
.phl-tl{font:12px/1.35 var(--jp-ui-font-family,-apple-system,Segoe UI,Helvetica,Arial,sans-serif);
  color:var(--jp-ui-font-color1,#212121);position:relative;max-width:100%;
  background:var(--jp-layout-color0,#fff);padding:2px 0}
.phl-tl .phl-muted{color:var(--jp-ui-font-color2,#5f5f5f)}
.phl-tl .phl-bar{display:flex;gap:10px;align-items:center;margin:4px 0;flex-wrap:wrap}
.phl-tl .phl-legend span{display:inline-block;margin-right:10px;white-space:nowrap}
.phl-tl .phl-legend i{display:inline-block;width:10px;height:10px;margin-right:3px;
  vertical-align:-1px;border-radius:2px}
.phl-tl canvas{display:block;border:1px solid var(--jp-border-color2,#ddd);cursor:grab;
  touch-action:none;
  background:var(--jp-layout-color0,#fff);outline:none}
.phl-tl canvas:focus{border-color:var(--jp-brand-color1,#1976d2)}
.phl-tl .phl-tip{position:absolute;pointer-events:none;background:var(--jp-layout-color2,#eee);
  color:var(--jp-ui-font-color1,#212121);border:1px solid var(--jp-border-color1,#999);
  padding:5px 7px;border-radius:4px;white-space:pre;display:none;z-index:10;
  font:11px/1.35 var(--jp-code-font-family,Menlo,Consolas,monospace);max-width:520px;
  overflow:hidden;box-shadow:0 2px 6px rgba(0,0,0,.25)}
.phl-tl button,.phl-tl input{font-size:11px;padding:1px 6px;
  color:var(--jp-ui-font-color1,#212121);background:var(--jp-layout-color1,#fff);
  border:1px solid var(--jp-border-color1,#999);border-radius:2px}
.phl-tl input{width:14em}
.phl-tl .phl-sel{font:11px/1.4 var(--jp-code-font-family,Menlo,Consolas,monospace);
  white-space:pre-wrap;margin:4px 0;color:var(--jp-ui-font-color1,#212121)}
.phl-sum{border-collapse:collapse;margin:8px 0 16px 0;color:var(--jp-ui-font-color1,#212121);
  font:12px var(--jp-code-font-family,Menlo,Consolas,monospace);
  background:var(--jp-layout-color0,#fff)}
.phl-sum caption{text-align:left;font-weight:bold;padding:4px 0;
  color:var(--jp-ui-font-color1,#212121);
  font-family:var(--jp-ui-font-family,-apple-system,Segoe UI,Helvetica,Arial,sans-serif)}
.phl-sum caption span{font-weight:normal;color:var(--jp-ui-font-color2,#5f5f5f)}
.phl-sum th{background:var(--jp-layout-color2,#eee);color:var(--jp-ui-font-color1,#212121);
  cursor:pointer;user-select:none;padding:3px 8px;
  border-bottom:1px solid var(--jp-border-color1,#bbb);text-align:left;white-space:nowrap}
.phl-sum th:hover{background:var(--jp-layout-color3,#ddd)}
.phl-sum td{padding:2px 8px;border-bottom:1px solid var(--jp-border-color2,#eee);
  white-space:nowrap;color:var(--jp-ui-font-color1,#212121)}
.phl-sum tr.phl-child td{color:var(--jp-ui-font-color1,#212121)}
.phl-sum td,.phl-sum th{text-align:right}
.phl-sum td:first-child,.phl-sum th:first-child,.phl-sum tr.phl-sec td{text-align:left}
.phl-sum tr.phl-sec td{background:var(--jp-layout-color1,#fafafa);
  color:var(--jp-ui-font-color1,#212121);font-style:italic}
.phl-notes{color:var(--jp-ui-font-color2,#5f5f5f);font-size:11px;margin:-10px 0 14px 0;
  white-space:pre-wrap}
"""

# The viewer: a canvas drawn from the compact event table. Per (row, lane) the events are
# sorted by start, so drawing and hit-testing use binary search over the visible window.
_JS = r"""
(function(){
const root=document.getElementById(__UID__);
if(!root||root.dataset.ready)return; root.dataset.ready="1";
const D=__DATA__;
const LH=16, GAP=6, LEFT=120, AXIS=22;
const cv=root.querySelector("canvas"), tip=root.querySelector(".phl-tip");
const ctx=cv.getContext("2d");
cv.tabIndex=0; cv.setAttribute("aria-label","timeline: W/S zoom, A/D pan, 0 reset");
const search=root.querySelector(".phl-search"), found=root.querySelector(".phl-found");
const selBox=root.querySelector(".phl-sel");
const rowsY=[]; let y=AXIS;
D.rows.forEach((r,i)=>{rowsY.push(y); y+=r.lanes?r.lanes*LH+GAP:LH;});
const H=y;
const lanes={};
D.events.forEach(e=>{const k=e[0]+":"+e[1];(lanes[k]=lanes[k]||[]).push(e);});
Object.values(lanes).forEach(a=>a.sort((p,q)=>p[2]-q[2]));
let tEnd=0; D.events.forEach(e=>{tEnd=Math.max(tEnd,e[2]+e[3]);}); if(tEnd<=0)tEnd=1;
let v0=0, v1=tEnd*1.02, query="", sel=null, mouseX=null;
// theme colours: JupyterLab's variables resolved on the page, normalised to #rrggbb
const probe=document.createElement("canvas").getContext("2d");
function css(name,fallback,base){const v=getComputedStyle(root).getPropertyValue(name).trim();
  probe.fillStyle=fallback; probe.fillStyle=v||fallback; const c=probe.fillStyle;
  if(c[0]==="#")return c;
  // a translucent theme colour (rgba): blend it over the background it is drawn on
  const p=c.match(/[\d.]+/g).map(Number), b=base?rgb(base):[255,255,255], a=p[3];
  return "#"+[0,1,2].map(i=>Math.round(p[i]*a+b[i]*(1-a)).toString(16).padStart(2,"0"))
    .join("");}
let C={};
function theme(){const bg=css("--jp-layout-color0","#ffffff");
  C={bg:bg,fg:css("--jp-ui-font-color1","#212121",bg),fg2:css("--jp-ui-font-color2","#5f5f5f",bg),
  band:css("--jp-layout-color1","#f7f7f7",bg),head:css("--jp-layout-color2","#e8eaf0",bg),
  grid:css("--jp-border-color2","#e0e0e0",bg),sel:css("--jp-brand-color1","#1976d2",bg)};}
function rgb(h){return [1,3,5].map(i=>parseInt(h.substr(i,2),16));}
function lum(h){const c=rgb(h).map(v=>{v/=255;
  return v<=0.03928?v/12.92:Math.pow((v+0.055)/1.055,2.4);});
  return 0.2126*c[0]+0.7152*c[1]+0.0722*c[2];}
const labelOn=D.colors.map(c=>{probe.fillStyle=c;
  return lum(probe.fillStyle)>0.3?"#000000":"#ffffff";});
function width(){return Math.max(400,(root.clientWidth||900)-4);}
function resize(){const dpr=window.devicePixelRatio||1, w=width();
  cv.width=w*dpr; cv.height=H*dpr; cv.style.width=w+"px"; cv.style.height=H+"px";
  ctx.setTransform(dpr,0,0,dpr,0,0); draw();}
function x2t(x){return v0+(x-LEFT)*(v1-v0)/(width()-LEFT);}
function t2x(t){return LEFT+(t-v0)*(width()-LEFT)/(v1-v0);}
function fmt(us){if(us>=1e6)return (us/1e6).toFixed(3)+" s";
  if(us>=1e3)return (us/1e3).toFixed(3)+" ms"; return us.toFixed(3)+" us";}
// one unit for the whole axis, chosen from the visible span
function unit(span){return span>=2e6?[1e6,"s"]:span>=2e3?[1e3,"ms"]:[1,"us"];}
function first(a,t){let lo=0,hi=a.length;
  while(lo<hi){const m=(lo+hi)>>1;if(a[m][2]+a[m][3]<t)lo=m+1;else hi=m;} return lo;}
function matches(e){return !query||D.names[e[4]].toLowerCase().indexOf(query)>=0;}
function draw(){
  const w=width(); ctx.fillStyle=C.bg; ctx.fillRect(0,0,w,H);
  ctx.font="11px sans-serif"; ctx.textBaseline="middle";
  const span=v1-v0, step=Math.pow(10,Math.floor(Math.log10(span/6)));
  let tick=step; if(span/tick>12)tick=step*2; if(span/tick>12)tick=step*5;
  const u=unit(span), dec=Math.max(0,-Math.floor(Math.log10(tick/u[0])+1e-9));
  ctx.strokeStyle=C.grid; ctx.fillStyle=C.fg2;
  for(let t=Math.ceil(v0/tick)*tick;t<=v1;t+=tick){const x=t2x(t); if(x<LEFT)continue;
    ctx.beginPath();ctx.moveTo(x,AXIS-4);ctx.lineTo(x,H);ctx.stroke();
    const label=(t/u[0]).toFixed(Math.min(dec,6));
    if(x+2+ctx.measureText(label).width<=w)ctx.fillText(label,x+2,9);}  // never clipped
  D.rows.forEach((r,ri)=>{
    const y0=rowsY[ri];
    if(!r.lanes){ctx.fillStyle=C.head;ctx.fillRect(0,y0,w,LH-2);ctx.fillStyle=C.fg;
      ctx.font="bold 11px sans-serif";ctx.fillText(r.label,4,y0+LH/2-1);
      ctx.font="11px sans-serif";return;}
    ctx.fillStyle=ri%2?C.bg:C.band;
    ctx.fillRect(0,y0-2,w,r.lanes*LH+4);
    for(let l=0;l<r.lanes;l++){const a=lanes[ri+":"+l]; if(!a)continue;
      let last=-1;
      for(let i=first(a,v0);i<a.length&&a[i][2]<=v1;i++){const e=a[i];
        const x=Math.max(LEFT,t2x(e[2])), x2=Math.min(w,t2x(e[2]+e[3]));
        if(x2-x<0.5&&Math.floor(x)===last)continue; last=Math.floor(x);
        const yy=y0+l*LH, hit=matches(e);
        ctx.globalAlpha=hit?1:0.18; ctx.fillStyle=D.colors[e[5]];
        ctx.fillRect(x,yy,Math.max(x2-x,1),LH-2);
        if(query&&hit){ctx.strokeStyle=C.fg;ctx.lineWidth=1;
          ctx.strokeRect(x+0.5,yy+0.5,Math.max(x2-x,1)-1,LH-3);}
        if(x2-x>30){ctx.save();ctx.beginPath();ctx.rect(x,yy,x2-x,LH-2);ctx.clip();
          ctx.fillStyle=labelOn[e[5]];ctx.fillText(D.names[e[4]],x+3,yy+LH/2-1);ctx.restore();}
        ctx.globalAlpha=1;
      }}
    ctx.fillStyle=C.bg; ctx.fillRect(0,y0-2,LEFT-2,r.lanes*LH+4);
    ctx.fillStyle=C.fg; ctx.fillText(r.group,10,y0+LH/2-1);
  });
  if(sel){const a=t2x(Math.min(sel[0],sel[1])), b=t2x(Math.max(sel[0],sel[1]));
    ctx.globalAlpha=0.18; ctx.fillStyle=C.sel; ctx.fillRect(a,AXIS-4,b-a,H-AXIS+4);
    ctx.globalAlpha=1; ctx.strokeStyle=C.sel; ctx.strokeRect(a+0.5,AXIS-4,b-a,H-AXIS+3);}
  ctx.fillStyle=C.bg; ctx.fillRect(0,0,LEFT-2,AXIS-4);
  ctx.fillStyle=C.fg; ctx.fillText("time ("+u[1]+")",4,9);
}
function hit(mx,my){
  for(let ri=0;ri<D.rows.length;ri++){const y0=rowsY[ri], r=D.rows[ri];
    if(my<y0||my>=y0+r.lanes*LH)continue; const l=Math.floor((my-y0)/LH);
    const a=lanes[ri+":"+l]; if(!a)return null; const t=x2t(mx), tol=3*(v1-v0)/(width()-LEFT);
    for(let i=first(a,t-tol);i<a.length&&a[i][2]<=t+tol;i++){const e=a[i];
      if(e[2]-tol<=t&&t<=e[2]+e[3]+tol)return e;}
    return null;}
  return null;}
function showTip(e,ev){
  let s=D.names[e[4]]+"\n"+D.cats[e[5]]+"  "+fmt(e[3])+"\nstart "+fmt(e[2]);
  if(e[6])s+="\n"+D.details[e[6]];
  tip.textContent=s; tip.style.display="block";
  const rr=root.getBoundingClientRect(), tw=tip.offsetWidth, th=tip.offsetHeight;
  const mx=ev.clientX-rr.left, my=ev.clientY-rr.top;
  let left=mx+12; if(left+tw>rr.width-2)left=Math.max(0,mx-12-tw);
  // near the bottom edge the tooltip flips above the cursor, so it stays in the output
  let top=my+14; if(top+th>rr.height-2)top=Math.max(0,my-10-th);
  tip.style.left=left+"px"; tip.style.top=top+"px";}
function summarize(){
  if(!sel||Math.abs(sel[1]-sel[0])<=0){selBox.textContent="";return;}
  const a=Math.min(sel[0],sel[1]), b=Math.max(sel[0],sel[1]); const per={}; let n=0, tot=0;
  D.events.forEach(e=>{const c=D.cats[e[5]]; if(c.indexOf("Operator")!==0)return;
    if(e[2]>=a&&e[2]+e[3]<=b&&matches(e)){n++; tot+=e[3];
      const k=D.names[e[4]]; per[k]=(per[k]||0)+e[3];}});
  const top=Object.entries(per).sort((p,q)=>q[1]-p[1]).slice(0,8)
    .map(p=>"  "+p[0]+": "+fmt(p[1])).join("\n");
  selBox.textContent="selection "+fmt(a)+" - "+fmt(b)+" ("+fmt(b-a)+"): "+n+" ops"+
    (query?" matching '"+query+"'":"")+", total "+fmt(tot)+(top?"\n"+top:"");}
let drag=null;
// Pointer events, with the default prevented on pointerdown: no compatibility mousedown then
// reaches JupyterLab, whose notebook would take a shift-click for extending the cell
// selection. Plain mouse events are handled too (scripted ones have no pointer events); the
// handlers are idempotent, so a move seen both ways costs a redraw, not a wrong state.
function down(ev){if(ev.type==="pointerdown")ev.preventDefault(); cv.focus();
  const rc=cv.getBoundingClientRect(), t=x2t(ev.clientX-rc.left);
  if(ev.shiftKey){drag={sel:true}; sel=[t,t]; draw(); return;}
  drag={x:ev.clientX,v0:v0,v1:v1};cv.style.cursor="grabbing";}
function up(){if(drag&&drag.sel)summarize(); drag=null; cv.style.cursor="grab";}
function move(ev){
  const rc=cv.getBoundingClientRect(), mx=ev.clientX-rc.left, my=ev.clientY-rc.top;
  mouseX=mx;
  if(drag&&drag.sel){sel[1]=x2t(mx); draw(); summarize(); return;}
  if(drag){const dt=(ev.clientX-drag.x)*(drag.v1-drag.v0)/(width()-LEFT);
    v0=drag.v0-dt; v1=drag.v1-dt; draw(); tip.style.display="none"; return;}
  const e=hit(mx,my);
  if(!e){tip.style.display="none";return;}
  showTip(e,ev);}
function leave(){tip.style.display="none";mouseX=null;}
["pointerdown","mousedown"].forEach(n=>cv.addEventListener(n,down));
["pointermove","mousemove"].forEach(n=>cv.addEventListener(n,move));
["pointerup","mouseup"].forEach(n=>window.addEventListener(n,up));
["pointerleave","mouseleave"].forEach(n=>cv.addEventListener(n,leave));
function zoom(f,t){v0=t-(t-v0)*f; v1=t+(v1-t)*f;
  if(v1-v0<0.01){const c=(v0+v1)/2;v0=c-0.005;v1=c+0.005;} draw();}
function reset(){v0=0;v1=tEnd*1.02;draw();}
cv.addEventListener("wheel",ev=>{ev.preventDefault();
  const rc=cv.getBoundingClientRect();
  zoom(Math.exp(ev.deltaY*0.002),x2t(ev.clientX-rc.left));},{passive:false});
cv.addEventListener("dblclick",reset);
// W/S zoom at the mouse (or the centre), A/D pan, 0 resets: as in Perfetto
cv.addEventListener("keydown",ev=>{const k=ev.key.toLowerCase(), span=v1-v0;
  const t=mouseX!==null?x2t(mouseX):(v0+v1)/2;
  if(k==="w")zoom(0.7,t); else if(k==="s")zoom(1/0.7,t);
  else if(k==="a"){v0-=span*0.2;v1-=span*0.2;draw();}
  else if(k==="d"){v0+=span*0.2;v1+=span*0.2;draw();}
  else if(k==="0"||k==="escape"){sel=null;summarize();reset();}
  else return;
  ev.preventDefault(); ev.stopPropagation();});
root.querySelectorAll("button[data-z]").forEach(b=>b.addEventListener("click",()=>{
  const z=b.dataset.z; if(z==="r"){sel=null;summarize();reset();}
  else zoom(z==="+"?0.5:2,(v0+v1)/2);}));
search.addEventListener("input",()=>{query=search.value.trim().toLowerCase();
  if(!query){found.textContent="";}else{let n=0,tot=0;
    D.events.forEach(e=>{if(matches(e)&&D.cats[e[5]].indexOf("Operator")===0){n++;tot+=e[3];}});
    found.textContent=n+" matching ops, total "+fmt(tot);}
  draw(); summarize();});
search.addEventListener("keydown",ev=>ev.stopPropagation());
const leg=root.querySelector(".phl-legend");
D.cats.forEach((c,i)=>{const s=document.createElement("span");
  s.innerHTML='<i style="background:'+D.colors[i]+'"></i>';
  s.appendChild(document.createTextNode(c));
  leg.appendChild(s);});
__SORT__
if(window.ResizeObserver){new ResizeObserver(()=>resize()).observe(root);}
// a theme switch in JupyterLab changes the variables: redraw with the new colours
new MutationObserver(()=>{theme();draw();}).observe(document.body,
  {attributes:true,attributeFilter:["data-jp-theme-name","data-jp-theme-light"]});
theme(); resize();
// for scripted checks: the visible window in us, the colour pairs of the canvas text, and
// the canvas position of a drawn event of the first or last row
root.phlView=()=>[v0,v1];
root.phlColors=()=>({pairs:[["row labels",rgb(C.fg),rgb(C.bg)],["thread headers",rgb(C.fg),
  rgb(C.head)],["axis",rgb(C.fg2),rgb(C.bg)],["bands",rgb(C.fg),rgb(C.band)]]});
root.phlPoint=(which)=>{const idx=D.rows.map((r,i)=>i).filter(i=>D.rows[i].lanes&&lanes[i+":0"]);
  if(!idx.length)return null; const ri=which==="last"?idx[idx.length-1]:idx[0];
  let best=null,bw=0; lanes[ri+":0"].forEach(e=>{const a=Math.max(LEFT,t2x(e[2])),
    b=Math.min(width(),t2x(e[2]+e[3])); if(b-a>bw){bw=b-a;best=[(a+b)/2,rowsY[ri]+LH/2-1];}});
  return best;};
root.dataset.drawn="1";
})();
"""


# Click a column header of a summary table to sort by it (again: the other way round).
_SORT_JS = r"""
root.querySelectorAll("table.phl-sum").forEach(tb=>{
  tb.querySelectorAll("th").forEach((th,ci)=>th.addEventListener("click",()=>{
    const asc=th.dataset.dir!=="asc"?false:true; th.dataset.dir=asc?"desc":"asc";
    const groups=Array.from(tb.tBodies);
    const key=g=>{const c=g.rows[0].cells[ci]; if(!c)return "";
      const k=c.dataset.k; if(k!==undefined&&k!=="")return parseFloat(k);
      const n=parseFloat(c.textContent); return isNaN(n)?c.textContent:n;};
    const sec=groups.filter(g=>g.classList.contains("phl-sec-body"));
    const body=groups.filter(g=>!g.classList.contains("phl-sec-body"));
    body.sort((a,b)=>{const x=key(a),y=key(b); const r=(x<y?-1:x>y?1:0); return asc?r:-r;});
    sec.concat(body).forEach(g=>tb.appendChild(g));}));});
"""
_JS = _JS.replace("__SORT__", _SORT_JS)


def summary_html(tables):
    """Summary tables as HTML (click a column header to sort).

    Args:
        tables (list): the profiler's finished tables, each with ``title``, ``preamble``,
            ``time_unit``, ``columns``, ``rows`` (``(level, cells)``; level None is a section
            line), ``keys`` (sort keys per row or None) and ``notes``.

    Returns:
        str: the HTML tables.
    """
    out = []
    for t in tables:
        cap = html.escape(t.title)
        extra = [html.escape(x) for x in t.preamble]
        if t.time_unit:
            extra.append(f"time unit: {t.time_unit}")
        if extra:
            cap += " <span>(" + "; ".join(extra) + ")</span>"
        parts = [f"<table class='phl-sum'><caption>{cap}</caption><thead><tr>"]
        parts.extend(f"<th title='click to sort'>{html.escape(c)}</th>" for c in t.columns)
        parts.append("</tr></thead>")
        group_open = False
        for (level, cells), keys in zip(t.rows, t.keys):
            if level is None:
                if group_open:
                    parts.append("</tbody>")
                    group_open = False
                if cells.strip():
                    parts.append(f"<tbody class='phl-sec-body'><tr class='phl-sec'><td "
                                 f"colspan='{len(t.columns)}'>{html.escape(cells)}</td></tr>"
                                 "</tbody>")
                continue
            if level == 0 or not group_open:
                if group_open:
                    parts.append("</tbody>")
                parts.append("<tbody>")
                group_open = True
            cls = " class='phl-child'" if level else ""
            tds = []
            for i, c in enumerate(cells):
                k = keys[i] if keys is not None and i < len(keys) else None
                kattr = f" data-k='{k}'" if isinstance(k, (int, float)) else ""
                pad = "&nbsp;&nbsp;" * level if i == 0 else ""
                tds.append(f"<td{kattr}>{pad}{html.escape(c)}</td>")
            parts.append(f"<tr{cls}>" + "".join(tds) + "</tr>")
        if group_open:
            parts.append("</tbody>")
        parts.append("</table>")
        if t.notes:
            parts.append("<div class='phl-notes'>" + html.escape("\n".join(t.notes)) + "</div>")
        out.append("".join(parts))
    return "\n".join(out)


def summary_block_html(tables) -> str:
    """The summary tables on their own, styled and sortable (what ``Profiler.summary`` shows
    in a notebook).

    Args:
        tables (list): the profiler's finished tables (see :func:`summary_html`).

    Returns:
        str: the HTML block.
    """
    uid = "phl-sum-" + uuid.uuid4().hex[:12]
    body = summary_html(tables)
    js = ("(function(){const root=document.getElementById(" + json.dumps(uid) +
          ");if(!root||root.dataset.ready)return;root.dataset.ready='1';" + _SORT_JS + "})();")
    return (f"<div class='phl-summary' id='{uid}'><style>{_CSS}</style>{body}"
            f"<script>{js}</script></div>")


class SummaryTables:
    """``Profiler.summary``'s tables: HTML in Jupyter, Paddle's text elsewhere.

    Args:
        tables (list): the profiler's finished tables (see :func:`summary_html`).
        text (str): Paddle's text tables (``repr``).
    """

    def __init__(self, tables, text):
        self._tables = tables
        self._text = text

    def _repr_html_(self):
        return summary_block_html(self._tables)

    def __repr__(self):
        return self._text


def timeline_html(result, max_events=200_000, tables=None):
    """One self-contained HTML block: the interactive timeline, then the summary tables.

    Args:
        result (ProfilerResult): the recorded (or loaded) profiling data; its ``events`` and
            ``trees()`` are drawn.
        max_events (int, optional): draw at most this many events (the longest ones are
            kept). Defaults to 200000.
        tables (list, optional): the profiler's finished summary tables to append, sortable
            (see :func:`summary_html`); None draws the timeline alone.

    Returns:
        str: the HTML.
    """
    data = _layout(result, max_events)
    uid = "phl-tl-" + uuid.uuid4().hex[:12]
    n = len(data["events"])
    note = f"{n} events"
    if data["dropped"]:
        note += f" ({data['dropped']} shortest not drawn)"
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    tables = summary_html(tables) if tables else ""
    js = _JS.replace("__UID__", json.dumps(uid)).replace("__DATA__", payload)
    return (f"<div class='phl-tl' id='{uid}'><style>{_CSS}</style>"
            "<div class='phl-bar'><b>paddle_hl profiler timeline</b>"
            f"<span class='phl-muted'>{note}; wheel or W/S: zoom, drag or A/D: pan, "
            "shift-drag: select a range, 0 or double-click: reset</span>"
            "<button data-z='+'>zoom in</button><button data-z='-'>zoom out</button>"
            "<button data-z='r'>reset</button></div>"
            "<div class='phl-bar'><input class='phl-search' type='search' "
            "placeholder='search ops (e.g. conv)' aria-label='search ops'>"
            "<span class='phl-found'></span></div>"
            "<div class='phl-bar phl-legend'></div>"
            "<canvas></canvas>"
            "<div class='phl-sel'></div><div class='phl-tip'></div>"
            f"{tables}<script>{js}</script></div>")


class Timeline:
    """A displayable timeline of a ProfilerResult (``Profiler.timeline()`` returns one).

    In Jupyter it renders inline through ``_repr_html_``; elsewhere use :meth:`save` to write
    a standalone HTML page, or :attr:`html` for the markup.

    Args:
        result (ProfilerResult): the data (``Profiler.profiler_result`` or
            ``load_profiler_result(path)``).
        tables (list, optional): summary tables to draw under the timeline (the profiler
            builds them: ``Profiler.timeline(summary=True)``).
        max_events (int, optional): draw at most this many events. Defaults to 200000.
    """

    def __init__(self, result, tables=None, max_events=200_000):
        self.result = result
        self.options = {"tables": tables, "max_events": max_events}

    @property
    def html(self):
        return timeline_html(self.result, **self.options)

    def _repr_html_(self):
        return self.html

    def save(self, path):
        """Write a standalone HTML page that shows the timeline in any browser."""
        page = ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>paddle_hl profiler "
                "timeline</title></head><body>" + self.html + "</body></html>").encode("utf-8")
        # a temporary file beside the target, then a rename: a failed write keeps the old page
        # (the views import nothing from the library, so not its writer)
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                                   dir=folder)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(page)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return path

    def __repr__(self):
        return (f"<Timeline: {len(self.result.events)} events; display it in a notebook or "
                "save(path) as HTML>")
