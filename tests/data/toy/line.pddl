; A toy domain for tests/test_extending.py: a robot on a line of cells visits the goal cells.
(define (domain line)
  (:requirements :strips)
  (:predicates (at ?c) (adjacent ?a ?b) (visited ?c))
  (:action move
    :parameters (?from ?to)
    :precondition (and (at ?from) (adjacent ?from ?to))
    :effect (and (at ?to) (not (at ?from)) (visited ?to))))
