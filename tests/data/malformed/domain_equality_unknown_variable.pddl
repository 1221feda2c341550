; The terms of (= ...) must be parameters or constants.
(define (domain bw)
  (:requirements :strips :equality)
  (:predicates (on ?x ?y) (clear ?x))
  (:action stack
    :parameters (?x ?y)
    :precondition (and (clear ?x)
                       (not (= ?x ?z)))
    :effect (on ?x ?y)))
