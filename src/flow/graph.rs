//! Graph algorithms over a flow's steps: strongly connected components (for `CYCLE`) and
//! reachability from `start` (for `UNREACHABLE`). Nodes are indices; both are iterative, so a
//! long flow cannot overflow the stack.

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
    fn reachability() {
        let adj = vec![vec![1], vec![], vec![1], vec![3]];
        assert_eq!(reachable(&adj, 0), vec![true, true, false, false]);
    }
}
