; Equality can be tested in a condition, never made true by an effect.
(define (domain bw)
  (:requirements :strips :equality)
  (:predicates (on ?x ?y) (clear ?x))
  (:action stack
    :parameters (?x ?y)
    :precondition (clear ?x)
    :effect (and (on ?x ?y) (= ?x ?y))))
