//! Graph algorithms over a flow's steps: strongly connected components (for `CYCLE`),
//! reachability from `start` (for `UNREACHABLE`) and the longest run of steps one engine call
//! may enter (for `TRANSITION_TOO_LONG`). Nodes are indices; all are iterative, so a long flow
//! cannot overflow the stack.

/// The strongly connected components of the graph `adj` (Tarjan's algorithm), each a list of
/// node indices. Every node is in exactly one component.
pub fn strongly_connected(adj: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let n = adj.len();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut next_index = 0;
    let mut out = Vec::new();
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        // (node, how many of its edges have been followed)
        let mut call: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&(v, i)) = call.last() {
            if i < adj[v].len() {
                call.last_mut().expect("non-empty").1 += 1;
                let w = adj[v][i];
                if index[w] == UNSEEN {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    call.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(u, _)) = call.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut comp = Vec::new();
                    loop {
                        let w = stack.pop().expect("v is on the stack");
                        on_stack[w] = false;
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    comp.sort_unstable();
                    out.push(comp);
                }
            }
        }
    }
    out
}

/// True when the component can be walked round: more than one node, or a node with an edge to
/// itself.
pub fn is_cyclic(comp: &[usize], adj: &[Vec<usize>]) -> bool {
    comp.len() > 1 || adj[comp[0]].contains(&comp[0])
}

/// Which nodes a path from `start` reaches (`start` included).
pub fn reachable(adj: &[Vec<usize>], start: usize) -> Vec<bool> {
    let mut seen = vec![false; adj.len()];
    let mut todo = vec![start];
    seen[start] = true;
    while let Some(v) = todo.pop() {
        for &w in &adj[v] {
            if !seen[w] {
                seen[w] = true;
                todo.push(w);
            }
        }
    }
    seen
}

/// The longest path one engine call may enter: steps that need not let time pass, then one
/// more (the step it stops at; `stops[v]` says that entering `v` suspends the call), as node
/// indices in order; empty for an empty graph. An edge back into the path (a cycle of steps
/// that never stop, which `CYCLE` refuses) is not followed. Ties go to the lowest index.
pub fn longest_run(adj: &[Vec<usize>], stops: &[bool]) -> Vec<usize> {
    const WHITE: u8 = 0;
    const GRAY: u8 = 1;
    const BLACK: u8 = 2;
    let n = adj.len();
    let mut color = vec![WHITE; n];
    // Steps entered from `v` on (itself included), and the successor that gives them.
    let mut len = vec![0usize; n];
    let mut via = vec![usize::MAX; n];
    for root in 0..n {
        if color[root] != WHITE {
            continue;
        }
        let mut call: Vec<(usize, usize)> = vec![(root, 0)];
        color[root] = GRAY;
        while let Some(&(v, i)) = call.last() {
            let edges: &[usize] = if stops[v] { &[] } else { &adj[v] };
            if i < edges.len() {
                call.last_mut().expect("non-empty").1 += 1;
                let w = edges[i];
                if color[w] == WHITE {
                    color[w] = GRAY;
                    call.push((w, 0));
                }
                continue;
            }
            call.pop();
            len[v] = 1;
            for &w in edges {
                if color[w] == BLACK && 1 + len[w] > len[v] {
                    len[v] = 1 + len[w];
                    via[v] = w;
                }
            }
            color[v] = BLACK;
        }
    }
    let Some(mut v) = (0..n).max_by_key(|&v| (len[v], std::cmp::Reverse(v))) else {
        return Vec::new();
    };
    let mut path = vec![v];
    while via[v] != usize::MAX {
        v = via[v];
        path.push(v);
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cyclic(adj: &[Vec<usize>]) -> Vec<Vec<usize>> {
        let mut c: Vec<_> = strongly_connected(adj)
            .into_iter()
            .filter(|c| is_cyclic(c, adj))
            .collect();
        c.sort();
        c
    }

    #[test]
    fn components() {
        #[allow(clippy::type_complexity)] // a table of (graph, expected cyclic components)
        let cases: &[(&[&[usize]], &[&[usize]])] = &[
            (&[&[1], &[2], &[]], &[]),
            (&[&[0]], &[&[0]]),
            (&[&[1], &[0]], &[&[0, 1]]),
            (&[&[1], &[2], &[1, 3], &[]], &[&[1, 2]]),
            (&[&[1], &[2], &[0], &[4], &[3, 4]], &[&[0, 1, 2], &[3, 4]]),
            (&[&[1, 2], &[3], &[3], &[]], &[]),
            (&[&[1], &[2], &[3], &[1]], &[&[1, 2, 3]]),
        ];
        for (adj, want) in cases {
            let adj: Vec<Vec<usize>> = adj.iter().map(|e| e.to_vec()).collect();
            let want: Vec<Vec<usize>> = want.iter().map(|c| c.to_vec()).collect();
            assert_eq!(cyclic(&adj), want, "{adj:?}");
            let total: usize = strongly_connected(&adj).iter().map(Vec::len).sum();
            assert_eq!(total, adj.len());
        }
    }

    #[test]
    fn long_chain_does_not_overflow() {
        let n = 200_000;
        let mut adj: Vec<Vec<usize>> = (0..n).map(|i| vec![i + 1]).collect();
        adj[n - 1] = vec![0];
        assert_eq!(cyclic(&adj).len(), 1);
        assert!(reachable(&adj, 5).iter().all(|&r| r));
    }

    #[test]
    fn longest_runs() {
        // (edges, which nodes stop, the longest run)
        #[allow(clippy::type_complexity)]
        let cases: &[(&[&[usize]], &[usize], &[usize])] = &[
            (&[], &[], &[]),
            (&[&[]], &[], &[0]),
            (&[&[1], &[2], &[]], &[], &[0, 1, 2]),
            // A stop ends the run but counts: 0 -> 1(stop) -> 2 is two steps from 0.
            (&[&[1], &[2], &[]], &[1], &[0, 1]),
            // The longer branch wins.
            (&[&[1, 2], &[], &[3], &[]], &[], &[0, 2, 3]),
            // A cycle of non-stopping steps is cut where it closes.
            (&[&[1], &[0]], &[], &[0, 1]),
            // A run ends at a stop: 0,1 then 2,3,4.
            (&[&[1], &[2], &[3], &[4], &[]], &[1], &[2, 3, 4]),
            // Equal runs: the lowest index.
            (&[&[1], &[], &[3], &[]], &[], &[0, 1]),
        ];
        for (adj, stops, want) in cases {
            let adj: Vec<Vec<usize>> = adj.iter().map(|e| e.to_vec()).collect();
            let stop: Vec<bool> = (0..adj.len()).map(|i| stops.contains(&i)).collect();
            assert_eq!(longest_run(&adj, &stop), want.to_vec(), "{adj:?} {stops:?}");
        }
        let n = 200_000;
        let adj: Vec<Vec<usize>> = (0..n)
            .map(|i| if i + 1 < n { vec![i + 1] } else { vec![] })
            .collect();
        assert_eq!(longest_run(&adj, &vec![false; n]).len(), n, "no overflow");
    }

    #[test]
    fn reachability() {
        let adj = vec![vec![1], vec![], vec![1], vec![3]];
        assert_eq!(reachable(&adj, 0), vec![true, true, false, false]);
    }
}
