import csv,sys,collections
rows=list(csv.reader(open(sys.argv[1])))
h=None;agg=collections.OrderedDict()
for r in rows:
    if 'Kernel Name' in r: h=r;continue
    if h is None or len(r)!=len(h): continue
    d=dict(zip(h,r))
    if d.get('Metric Name')!='gpu__time_duration.sum': continue
    k=d['Kernel Name'][:70]; v=float(d['Metric Value'].replace(',',''))
    u=d.get('Metric Unit','')
    if u=='usecond': v*=1e3
    if u=='msecond': v*=1e6
    agg.setdefault(k,[0,0]); agg[k][0]+=1; agg[k][1]+=v
for k,(c,v) in sorted(agg.items(),key=lambda x:-x[1][1]): print(f"{v/1e3:10.1f} us  x{c:3d}  {k}")
