/* olla-onnx: node order and tensor addresses in one ILP (OLLA eq. 11), for
 * small graphs. */
#ifndef OLLA_JOINT_H
#define OLLA_JOINT_H

#include <stdint.h>

#include "passes/analysis/olla_dag.h"

/* Size guard: larger graphs are not attempted. */
#define OLLA_JOINT_MAX_NODES 40
#define OLLA_JOINT_MAX_COLS 20000L

/* What the joint ILP solves: the two-step plan to start from,
 * start_order (a topological order) and start_offsets (one offset per DAG
 * tensor, multiples of alignment, valid for the lifetimes of start_order). */
typedef struct olla_joint_problem {
    const olla_dag *dag;
    const int *start_order;
    const int64_t *start_offsets;
    int64_t alignment;
} olla_joint_problem;

/* Starting from the two-step plan of pb, looks for an order and offsets
 * with a smaller arena. On OLLA_OK, order_out (n_nodes), offsets_out
 * (n_tensors; 0 for tensors of 0 bytes) and *arena_out always hold a valid
 * plan under the liveness of olla_dag_lifetimes, never larger than the
 * start: the joint solution when it is strictly smaller, else the start
 * itself. *proven_optimal is 1 when CBC proved the arena optimal. Graphs
 * above the size guard are refused: the start is returned
 * (olla_joint_columns tells beforehand). time_limit <= 0: none (the solve
 * then runs in this process); otherwise CBC runs in a child process killed
 * at the deadline. OLLA_ERR_INPUT when the start is not a valid plan. */
olla_status olla_joint_solve(const olla_joint_problem *pb, double time_limit, int *order_out, int64_t *offsets_out,
                             int64_t *arena_out, int *proven_optimal, olla_error *err);

/* The number of columns the joint ILP of dag would have (*cols), and 1 in
 * *fits when it is within the size guard. */
olla_status olla_joint_columns(const olla_dag *dag, long *cols, int *fits, olla_error *err);

#endif
